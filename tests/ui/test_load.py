"""A bounded load test: rounds of a full model queue (8 clients x 2 small runs, through the raw
API, half of them never reading their stream) against the real app on loopback. Memory must
plateau: gradio's per-call sessions are dropped when their event ends (ui.queue_limits.
RawSessions), so what the server holds does not grow with the number of calls. The measured
numbers are in docs/security.md."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator

import pytest

from tests.support.fakes import fake_pool
from tests.support.served import HTTP_TIMEOUT_S, ServedApp, rss_bytes, serve_app
from ui import queue_limits
from ui.queue_limits import GENERATION_PER_CLIENT, GENERATION_TOTAL, generation_events
from ui.state import ARENA_FIELDS, ArenaRequest

RUN = ArenaRequest(model="obey", n=3, c=1, k=8, m=0, max_tokens=32, task="logic3")
ROUNDS = 8


class _NoGrace(queue_limits.RawSessions):
    """Unread frames of an ended raw call dropped at the next sweep, not 60 s later: what each
    round leaves is then measured once it is all swept, not a share that depends on the pace."""

    def __init__(self, blocks, grace: float = 0.0, clock=time.monotonic) -> None:
        super().__init__(blocks, grace, clock)


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Iterator[ServedApp]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(queue_limits, "RawSessions", _NoGrace)
        yield from serve_app(fake_pool(), tmp_path_factory.mktemp("load"))


def _run(url: str, address: str, read: bool, codes: list[int]) -> None:
    import httpx

    data = {"data": [getattr(RUN, name) for name in ARENA_FIELDS]}
    posted = httpx.post(
        url + "gradio_api/call/run",
        json=data,
        headers={"X-Forwarded-For": address},
        timeout=HTTP_TIMEOUT_S,
    )
    codes.append(posted.status_code)
    if read and posted.status_code == 200:
        event = posted.json()["event_id"]
        with httpx.stream("GET", f"{url}gradio_api/call/run/{event}", timeout=120) as stream:
            for _ in stream.iter_lines():
                pass


def _full_queue(app: ServedApp, round_: int) -> list[int]:
    """One round: every client posts its two runs at once; returns the HTTP codes."""
    codes: list[int] = []
    threads = [
        threading.Thread(target=_run, args=(app.url, f"10.3.{round_}.{i}", j == 0, codes))
        for i in range(GENERATION_TOTAL // GENERATION_PER_CLIENT)
        for j in range(GENERATION_PER_CLIENT)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    deadline = time.monotonic() + 120
    while generation_events(app.demo._queue) and time.monotonic() < deadline:
        time.sleep(0.1)
    return codes


def _held_after_the_sweeps(app: ServedApp) -> tuple[int, int]:
    """(sessions, sessions with unread frames) the server holds once its sweeps (every 5 s) have
    dropped what the round's ended calls left: polled up to 60 s, not one fixed wait, which a
    loaded machine's event loop can outlast."""
    queue = app.demo._queue

    def held() -> tuple[int, int]:
        return len(app.demo.state_holder.session_data), len(queue.pending_messages_per_session)

    deadline = time.monotonic() + 60
    while max(held()) > 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    return held()


@pytest.mark.slow
def test_memory_plateaus_over_rounds_of_a_full_queue(app: ServedApp, monkeypatch) -> None:
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")
    rss, sessions = [], []
    for round_ in range(ROUNDS):
        codes = _full_queue(app, round_)
        assert codes.count(200) == GENERATION_TOTAL, codes
        sessions.append(_held_after_the_sweeps(app))
        assert max(sessions[-1]) <= 2, sessions  # 16 calls, nothing kept past the sweeps
        gc.collect()  # what is held, not garbage not yet collected
        rss.append(rss_bytes())
    grown = (rss[-1] - rss[1]) / 2**20
    print(f"RSS after each round (MB): {[round(r / 2**20) for r in rss]}; sessions {sessions}")
    assert grown < 48, f"memory grew {grown:.0f} MB over rounds 2-{ROUNDS}"
