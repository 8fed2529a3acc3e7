"""Sessions: one client's new sessions push out only its own. Gradio keeps a bounded pool of
session states (`RRDEMO_SESSIONS`) and drops the least recently used of all; the probe's 600
fresh session hashes from one address dropped another visitor's finished sweep
(`ui.queue_limits.SessionQuota`)."""

from __future__ import annotations

import gradio as gr
from gradio.state_holder import StateHolder

from ui.queue_limits import DEFAULT_SESSIONS, DEFAULT_SESSIONS_PER_CLIENT, SessionQuota


def _holder(capacity: int) -> tuple[StateHolder, gr.State]:
    """Gradio's real session pool over a page with one State (the sweep's log, as the
    Experiments tab keeps it)."""
    with gr.Blocks() as blocks:
        log = gr.State(None)
    blocks.state_session_capacity = capacity
    holder = StateHolder()
    holder.set_blocks(blocks)
    return holder, log


def _visit(holder: StateHolder, quota: SessionQuota | None, session: str, client: str) -> None:
    if quota is not None:
        quota.own(session, client)  # what `limit_queue` records when the event joins
    holder[session]  # what gradio does when the event runs


def _flood(quota: SessionQuota | None) -> StateHolder:
    holder, log = _holder(DEFAULT_SESSIONS)
    if quota is not None:
        quota.install(holder)
    _visit(holder, quota, "victim", "ip:10.0.0.2")
    holder["victim"][log._id] = "sweep-20261128.jsonl"  # a finished sweep
    for i in range(600):  # the probe: 600 cheap joins, each with a new session hash
        _visit(holder, quota, f"flood-{i}", "ip:10.0.0.66")
    return holder


def test_600_session_hashes_from_one_address_do_not_evict_another_clients_sweep() -> None:
    holder = _flood(SessionQuota(DEFAULT_SESSIONS_PER_CLIENT))
    assert "victim" in holder.session_data
    assert "sweep-20261128.jsonl" in holder.session_data["victim"].state_data.values()
    flood = [s for s in holder.session_data if s.startswith("flood-")]
    assert flood == [f"flood-{i}" for i in range(600 - DEFAULT_SESSIONS_PER_CLIENT, 600)]
    # gradio's own pool, without the quota, drops the sweep
    assert "victim" not in _flood(None).session_data


def test_a_full_pool_drops_the_oldest_session_of_the_client_holding_most() -> None:
    holder, _ = _holder(6)
    quota = SessionQuota(per_client=4)
    quota.install(holder)
    for i in range(3):
        _visit(holder, quota, f"a{i}", "ip:a")
    for i in range(3):
        _visit(holder, quota, f"b{i}", "ip:b")
    _visit(holder, quota, "c0", "ip:c")  # full: a and b hold 3 each; a's oldest goes first
    assert list(holder.session_data) == ["a1", "a2", "b0", "b1", "b2", "c0"]
    _visit(holder, quota, "c1", "ip:c")  # now b holds the most
    assert list(holder.session_data) == ["a1", "a2", "b1", "b2", "c0", "c1"]
    holder["a1"]  # used again: a's least recently used is a2 now
    _visit(holder, quota, "a3", "ip:a")  # a holds the most (3 of 7)
    assert list(holder.session_data) == ["b1", "b2", "c0", "c1", "a1", "a3"]
    for i in range(4, 9):  # a client at its quota of 4 replaces its own sessions
        _visit(holder, quota, f"a{i}", "ip:a")
    assert list(holder.session_data) == ["b1", "b2", "c0", "c1", "a7", "a8"]
