"""A bounded load test: rounds of a full model queue (8 clients x 2 small runs, through the raw
API, half of them never reading their stream) against the real app on loopback. Memory must
plateau: gradio keeps at most `RRDEMO_SESSIONS` sessions (here a pool of 24, filled by round 2),
and a run nobody reads makes at most two frames before it ends (`ui.streams.paced`), so what the
server holds does not grow with the number of calls. The measured numbers are in
docs/security.md."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator

import pytest

from tests.support.fakes import fake_pool
from tests.support.queue_probe import generation_events
from tests.support.served import HTTP_TIMEOUT_S, ServedApp, rss_bytes, serve_app
from ui import streams
from ui.queue_limits import GENERATION_PER_CLIENT, GENERATION_TOTAL
from ui.state import ARENA_FIELDS, ArenaRequest

RUN = ArenaRequest(model="obey", n=3, c=1, k=8, m=0, max_tokens=32, task="logic3")
ROUNDS = 5  # the pool fills in round 2; rounds 2-5 show the plateau
POOL = 24  # sessions gradio keeps here: 16 calls a round fill it in round 2
UNREAD_FRAMES = 2  # the most frames a run nobody reads leaves behind


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Iterator[ServedApp]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RRDEMO_SESSIONS", str(POOL))
        mp.setattr(streams, "READ_WAIT_S", 2.0)  # an unread run ends 2 s after its first frame
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


def _held(app: ServedApp) -> tuple[int, int]:
    """(sessions gradio keeps, the most unread frames one of them holds), read from gradio."""
    pending = app.demo._queue.pending_messages_per_session.values()
    frames = [sum(str(m.msg).endswith("process_generating") for m in q._queue) for q in pending]
    return len(app.demo.state_holder.session_data), max(frames, default=0)


@pytest.mark.slow
def test_memory_plateaus_over_rounds_of_a_full_queue(app: ServedApp, monkeypatch) -> None:
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")
    rss, sessions = [], []
    for round_ in range(ROUNDS):
        codes = _full_queue(app, round_)
        assert codes.count(200) == GENERATION_TOTAL, codes
        sessions.append(_held(app))
        kept, unread = sessions[-1]
        assert kept <= POOL and unread <= UNREAD_FRAMES, sessions
        gc.collect()  # what is held, not garbage not yet collected
        rss.append(rss_bytes())
    grown = (rss[-1] - rss[1]) / 2**20
    print(f"RSS after each round (MB): {[round(r / 2**20) for r in rss]}; sessions {sessions}")
    assert grown < 48, f"memory grew {grown:.0f} MB over rounds 2-{ROUNDS}"
