"""How long the web app's queue may grow: model runs are bounded per visitor and in total.

Every event that runs a model (Arena runs and presets, Experiments sweeps) is in the concurrency
group `GENERATION`, which runs one at a time. Gradio bounds only the whole queue, so one visitor
with many queued runs would make the cheap reads (leaderboard, theory, about) answer "Queue is
full" too. `limit_generation` checks each new model run before it joins: at most `per_session`
per visitor (a browser tab or client session) and `total` for everyone, each refused with a
message that says why. Cheap reads are never counted, so they keep answering.
"""

from __future__ import annotations

import asyncio

import gradio as gr

GENERATION = "model"  # the concurrency group of every event that runs a model
GENERATION_TOTAL = 16  # a 2-core CPU Space runs one at a time; more waiters would time out
GENERATION_PER_SESSION = 2  # one running and one waiting


def generation_events(queue) -> list:
    """The model runs waiting or running now in gradio's `queue` (`demo._queue`)."""
    waiting = queue.event_queue_per_concurrency_id.get(GENERATION)
    events = list(waiting.queue) if waiting is not None else []
    for job in queue.active_jobs:
        events += [event for event in job or () if event.concurrency_id == GENERATION]
    return events


def refusal(events: list, session: str | None, total: int, per_session: int) -> str | None:
    """Why a new model run of `session` may not join, or None when it may."""
    if sum(event.session_hash == session for event in events) >= per_session:
        return (
            f"You already have {per_session} runs waiting or running: wait for one to finish "
            "(or press Stop), then start another."
        )
    if len(events) >= total:
        return (
            f"The model queue is full ({total} runs waiting or running); the Theory, "
            "Leaderboard and About tabs still answer. Try again in a few minutes."
        )
    return None


def limit_generation(
    demo: gr.Blocks, total: int = GENERATION_TOTAL, per_session: int = GENERATION_PER_SESSION
) -> None:
    """Refuse model runs beyond the limits when they ask to join `demo`'s queue (call after
    `demo.queue()`)."""
    queue = demo._queue
    join = queue.push
    lock = asyncio.Lock()  # a check and its join happen together: two requests cannot both pass

    async def push(body, request, username):
        fn = demo.fns.get(body.fn_index) if body.fn_index is not None else None
        if fn is None or fn.concurrency_id != GENERATION:
            return await join(body, request, username)
        async with lock:
            reason = refusal(generation_events(queue), body.session_hash, total, per_session)
            if reason is not None:  # shown like a validation message, by the page and clients
                refused = {"__type__": "validate", "is_valid": False, "message": reason}
                return False, [{**refused, "parameter_name": "limit"}], "validator_error"
            return await join(body, request, username)

    queue.push = push
