"""How long the model queue may grow: the runs counted, and why a new one may not join (per
visitor, then in total). The limits on a live app: test_security.py."""

from __future__ import annotations

from types import SimpleNamespace

from ui.queue_limits import (
    GENERATION,
    GENERATION_PER_SESSION,
    GENERATION_TOTAL,
    generation_events,
    refusal,
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


def test_a_visitor_at_their_limit_is_told_to_wait_for_their_own_runs():
    mine = [_event("me")] * GENERATION_PER_SESSION
    reason = refusal(mine, "me", GENERATION_TOTAL, GENERATION_PER_SESSION)
    assert reason is not None and f"already have {GENERATION_PER_SESSION} runs" in reason
    assert refusal(mine[1:], "me", GENERATION_TOTAL, GENERATION_PER_SESSION) is None
    assert refusal(mine, "you", GENERATION_TOTAL, GENERATION_PER_SESSION) is None


def test_a_full_queue_refuses_everyone_and_says_the_cheap_tabs_still_answer():
    others = [_event(f"v{i}") for i in range(GENERATION_TOTAL)]
    reason = refusal(others, "new", GENERATION_TOTAL, GENERATION_PER_SESSION)
    assert reason is not None and f"full ({GENERATION_TOTAL} runs" in reason and "Theory" in reason
    assert refusal(others[1:], "new", GENERATION_TOTAL, GENERATION_PER_SESSION) is None
    # a visitor at their own limit hears about their own runs first
    full_of_mine = [_event("me")] * GENERATION_PER_SESSION + others
    assert "already have" in refusal(full_of_mine, "me", GENERATION_TOTAL, GENERATION_PER_SESSION)
