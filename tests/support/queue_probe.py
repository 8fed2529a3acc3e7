"""What gradio's own queue holds, read from its internals: tests check the door's bounds
(`ui.queue_door`) against the truth, which the app itself never reads."""

from __future__ import annotations

from ui.queue_limits import GENERATION


def queued_events(queue) -> list:
    """Every event waiting or running now in gradio's `queue` (`demo._queue`), of any group."""
    events = [e for waiting in queue.event_queue_per_concurrency_id.values() for e in waiting.queue]
    for job in queue.active_jobs:
        events += list(job or ())
    return events


def generation_events(queue) -> list:
    """The model runs waiting or running now in gradio's `queue`."""
    return [event for event in queued_events(queue) if event.concurrency_id == GENERATION]
