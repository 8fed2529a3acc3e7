"""How long the model queue may grow and how long a run may take: the runs counted, who a client
is (signed-in user, else address; a forged X-Forwarded-For counts for nothing), why a new run may
not join (per client, then in total), and a run stopped at its wall-time limit. The limits on a
live app: test_security.py."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import pytest

from rrdemo.errors import RRError
from ui.queue_limits import (
    GENERATION,
    GENERATION_PER_CLIENT,
    GENERATION_TOTAL,
    client_key,
    generation_events,
    refusal,
    run_seconds,
    time_limited,
)


def _event(session: str, group: str = GENERATION) -> SimpleNamespace:
    return SimpleNamespace(session_hash=session, concurrency_id=group)


def _queue(waiting: list, active: list) -> SimpleNamespace:
    groups = {
        GENERATION: SimpleNamespace(queue=waiting),
        "cheap": SimpleNamespace(queue=[_event("z", "cheap")]),
    }
    return SimpleNamespace(event_queue_per_concurrency_id=groups, active_jobs=active)


def test_model_runs_waiting_and_running_are_counted_and_cheap_reads_are_not():
    waiting = [_event("a"), _event("b")]
    running = _event("c")
    queue = _queue(waiting, [[running, _event("d", "cheap")], None])
    assert generation_events(queue) == [*waiting, running]
    empty = SimpleNamespace(event_queue_per_concurrency_id={}, active_jobs=[None])
    assert generation_events(empty) == []


def test_a_client_at_their_limit_is_told_to_wait_for_their_own_runs():
    mine = ["ip:1"] * GENERATION_PER_CLIENT
    reason = refusal(mine, "ip:1", GENERATION_TOTAL, GENERATION_PER_CLIENT)
    assert reason is not None and f"already have {GENERATION_PER_CLIENT} runs" in reason
    assert refusal(mine[1:], "ip:1", GENERATION_TOTAL, GENERATION_PER_CLIENT) is None
    assert refusal(mine, "ip:2", GENERATION_TOTAL, GENERATION_PER_CLIENT) is None


def test_a_full_queue_refuses_everyone_and_says_the_cheap_tabs_still_answer():
    others = [f"ip:{i}" for i in range(GENERATION_TOTAL)]
    reason = refusal(others, "new", GENERATION_TOTAL, GENERATION_PER_CLIENT)
    assert reason is not None and f"full ({GENERATION_TOTAL} runs" in reason and "Theory" in reason
    assert refusal(others[1:], "new", GENERATION_TOTAL, GENERATION_PER_CLIENT) is None
    full_of_mine = ["me"] * GENERATION_PER_CLIENT + others
    assert "already have" in refusal(full_of_mine, "me", GENERATION_TOTAL, GENERATION_PER_CLIENT)


def _request(host: str, forwarded: str = "", session: dict | None = None) -> SimpleNamespace:
    scope = {"session": session} if session is not None else {}
    headers = {"x-forwarded-for": forwarded} if forwarded else {}
    return SimpleNamespace(
        scope=scope, session=session, headers=headers, client=SimpleNamespace(host=host)
    )


def test_a_client_is_the_signed_in_user_else_the_address(monkeypatch):
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("RRDEMO_PROXY_HOPS", raising=False)
    assert client_key(_request("1.2.3.4"), "alice") == "user:alice"
    oauth = {"oauth_info": {"userinfo": {"preferred_username": "bob"}}}
    assert client_key(_request("1.2.3.4", session=oauth)) == "user:bob"
    assert client_key(_request("1.2.3.4", session={})) == "ip:1.2.3.4"
    # With no proxy in front, X-Forwarded-For is the client's own text: ignored.
    assert client_key(_request("1.2.3.4", "9.9.9.9")) == "ip:1.2.3.4"
    # Behind one proxy (a Space), the address it appended counts; what the client wrote does not.
    monkeypatch.setenv("SPACE_ID", "me/app")
    assert client_key(_request("10.0.0.1", "6.6.6.6, 5.6.7.8")) == "ip:5.6.7.8"
    assert client_key(_request("10.0.0.1")) == "ip:10.0.0.1"
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "2")
    assert client_key(_request("10.0.0.1", "6.6.6.6, 5.6.7.8, 10.0.0.2")) == "ip:5.6.7.8"
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "some")
    with pytest.raises(RRError, match="RRDEMO_PROXY_HOPS must be a whole number"):
        client_key(_request("10.0.0.1"))


def test_a_run_past_its_wall_time_is_closed_with_a_message(monkeypatch):
    now = [0.0]
    closed = []

    def frames(n: int):
        try:
            for i in range(n):
                now[0] += 4.0  # each frame takes 4 s
                yield i
        finally:
            closed.append(True)

    limited = time_limited(frames, seconds=lambda: 10, clock=lambda: now[0])
    seen = []
    with pytest.raises(gr.Error, match="time limit of 10 s and was stopped"):
        for frame in limited(100):
            seen.append(frame)
    assert seen == [0, 1, 2] and closed == [True]  # stopped at 12 s, its finally ran
    assert list(time_limited(frames, seconds=lambda: 10, clock=lambda: now[0])(2)) == [0, 1]
    monkeypatch.setenv("RRDEMO_RUN_SECONDS", "0")
    with pytest.raises(RRError, match="RRDEMO_RUN_SECONDS must be a whole number of at least 1"):
        run_seconds()
    monkeypatch.delenv("RRDEMO_RUN_SECONDS")
    assert run_seconds() == 600
