"""Sessions and calls counted at the door for every route. The probe: 600 calls to
`/gradio_api/run/predict` with fresh session hashes from one address pushed a signed-in
visitor's finished sweep out of gradio's session pool (the earlier fix held for queued events
only). Here each client may start a bounded number of sessions per window (`SessionBudget`) on
every route, and calls of events outside the queue are counted per client (`CallBudget`).
Small numbers (a pool of 20 sessions, 6 per client, 5 calls a minute): the property, not the
volume."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.security.victim import THEORY, answered_meanwhile
from tests.support.fakes import FakeBackend, fake_pool, obeys_injection
from tests.support.served import HTTP_TIMEOUT_S, ServedApp, serve_app
from ui.queue_limits import CallBudget, SessionBudget

POOL, PER_CLIENT, CALLS = 20, 6, 5


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[ServedApp]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RRDEMO_PROXY_HOPS", "1")
        env.setenv("RRDEMO_SESSIONS", str(POOL))
        env.setenv("RRDEMO_SESSIONS_PER_CLIENT", str(PER_CLIENT))
        env.setenv("RRDEMO_CALLS_PER_MINUTE", str(CALLS))
        yield from serve_app(fake_pool(), tmp_path_factory.mktemp("sessions"))


def _fn_index(served: ServedApp, api_name: str) -> int:
    return next(i for i, fn in served.demo.fns.items() if fn.api_name == api_name)


def _predict(served: ServedApp, fn_index: int, data: list, session: str, address: str):
    import httpx

    return httpx.post(
        f"{served.url}gradio_api/run/predict",
        json={"data": data, "fn_index": fn_index, "session_hash": session},
        headers={"X-Forwarded-For": address},
        timeout=HTTP_TIMEOUT_S,
    )


def test_fresh_sessions_from_one_address_cannot_push_out_another_visitors(
    served: ServedApp, monkeypatch
) -> None:
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")
    theory = _fn_index(served, "theory")
    victim = "victim-" + uuid.uuid4().hex
    assert _predict(served, theory, THEORY, victim, "10.50.0.2").status_code == 200
    replies = [
        _predict(served, theory, THEORY, uuid.uuid4().hex, "10.50.0.66") for _ in range(2 * POOL)
    ]
    codes = [r.status_code for r in replies]
    assert codes[:PER_CLIENT] == [200] * PER_CLIENT and set(codes[PER_CLIENT:]) == {429}
    assert "Too many new sessions: at most 6 per 10 minutes" in replies[-1].json()["detail"]
    # The pool holds 20; without the budget the 40 fresh sessions would have pushed the victim
    # out (gradio drops the least recently used of all). Read from gradio's own pool:
    assert victim in served.demo.state_holder.session_data
    # The attacker's known session still works; the victim's too; a third visitor's new one too.
    first = replies[0].request.content
    assert b"session_hash" in first
    assert _predict(served, theory, THEORY, victim, "10.50.0.2").status_code == 200
    assert _predict(served, theory, THEORY, uuid.uuid4().hex, "10.50.0.3").status_code == 200
    answered_meanwhile(served.url)


def test_calls_outside_the_queue_are_counted_per_client(served: ServedApp, monkeypatch) -> None:
    """An event outside the queue (the About tab's refresh: `queue=False`) through
    `/run/predict`: the sixth call in a minute from one address is refused, another's is not."""
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")
    runtime = _fn_index(served, "runtime")
    assert served.demo.fns[runtime].queue is False
    session = uuid.uuid4().hex
    codes = [_predict(served, runtime, [], session, "10.51.0.1").status_code for _ in range(6)]
    assert codes == [200] * CALLS + [429]
    refused = _predict(served, runtime, [], session, "10.51.0.1")
    assert f"at most {CALLS} a minute from one visitor" in refused.json()["detail"]
    assert _predict(served, runtime, [], uuid.uuid4().hex, "10.51.0.2").status_code == 200
    answered_meanwhile(served.url)


def test_the_budgets_slide_with_their_windows() -> None:
    now = [0.0]
    sessions = SessionBudget(per_client=2, window=600, capacity=10, clock=lambda: now[0])
    assert sessions.refusal("ip:a", "s1") is None and sessions.refusal("ip:a", None) is None
    assert "at most 2 per 10 minutes" in sessions.refusal("ip:a", "s2")
    assert sessions.refusal("ip:a", "s1") is None  # a known session is not new
    assert sessions.refusal("ip:b", "s3") is None  # another client has its own window
    now[0] = 600.0
    assert sessions.refusal("ip:a", "s2") is None
    calls = CallBudget(per_minute=1, clock=lambda: now[0])
    assert calls.refusal("ip:a") is None and "at most 1 a minute" in calls.refusal("ip:a")
    now[0] += 60
    assert calls.refusal("ip:a") is None


def _call(served: ServedApp, api_name: str, data: list, address: str) -> str:
    """A raw `/gradio_api/call/...` event from `address`, read to its end; its last event."""
    import httpx

    posted = httpx.post(
        f"{served.url}gradio_api/call/{api_name}",
        json={"data": data},
        headers={"X-Forwarded-For": address},
        timeout=HTTP_TIMEOUT_S,
    )
    assert posted.status_code == 200, posted.text
    url = f"{served.url}gradio_api/call/{api_name}/{posted.json()['event_id']}"
    last = ""
    with httpx.stream("GET", url, timeout=HTTP_TIMEOUT_S) as stream:
        for line in stream.iter_lines():
            if line.startswith("event:") and "heartbeat" not in line:
                last = line.split(":", 1)[1].strip()
    return last


def test_a_run_and_a_sweep_count_their_hub_downloads_against_the_visitor_who_sent_them(
    served: ServedApp, monkeypatch
) -> None:
    """The handlers read who sent an event from the `gr.Request` Gradio passes them (a parameter
    typed `gr.Request`), through the run's wrappers: the pool is asked for each visitor's view
    (`ModelPool.for_client`) under that visitor's address."""
    from ui.state import ARENA_FIELDS, ArenaRequest

    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")
    clients: list[str] = []

    def for_client(client: str):
        clients.append(client)
        return served.pool

    monkeypatch.setattr(served.pool, "for_client", for_client, raising=False)
    run = ArenaRequest(model="obey", n=3, c=1, k=8, m=0, max_tokens=16, task="logic3")
    assert _call(served, "run", [getattr(run, n) for n in ARENA_FIELDS], "10.53.0.1") == (
        "complete"
    )
    assert clients == ["ip:10.53.0.1"]
    # a sweep takes registry names: a scripted agent under one
    monkeypatch.setitem(served.pool.backends, "smollm2", FakeBackend("smollm2", obeys_injection))
    sweep = [["logic3"], "smollm2", "0c3t", ["strong"], 4, 16, 1, 0, ["static"]]
    assert _call(served, "sweep", sweep, "10.53.0.2") == "complete"
    assert clients == ["ip:10.53.0.1", "ip:10.53.0.2"]
