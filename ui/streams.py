"""Streams that take no more than their share: a frame is made only once the client has read the
one before, and a stream has a wall-time and a CPU-time deadline.

Gradio's queue pulls a generator's frames as fast as the generator makes them and keeps every
frame the client has not read yet: two replays joined and never read held 4 GB of frames. The
door (`ui.queue_door.QueueDoor`) sees each frame gradio sends down a session's stream
(`Deliveries.add`); `paced` waits, before making the next frame, until the frame before it has
been sent, so an unread stream holds at most two frames; after `READ_WAIT_S` without a read it
ends. `deadlined` stops a stream past its wall time or past the CPU time its own steps took
(`time.thread_time` around each step: the step runs whole in one worker thread). A stream that
ends, however it ends, tells the door (`Door.stream_ended`), so its slot is free at once even
when nobody reads it.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator

import gradio as gr

READ_WAIT_S = 30.0  # how long a stream waits for its client to read a frame, then ends
DOOR_KEY = "rrdemo.door"  # where the door leaves itself in each request's scope state


class Deliveries:
    """How many frames gradio has sent down each session's stream (bounded: the least recently
    counted sessions are forgotten first)."""

    def __init__(self, capacity: int = 4096) -> None:
        self.sent: OrderedDict[str, int] = OrderedDict()
        self.capacity = capacity
        self.changed = threading.Condition()

    def count(self, session: str) -> int:
        with self.changed:
            return self.sent.get(session, 0)

    def add(self, session: str) -> None:
        with self.changed:
            self.sent[session] = self.sent.get(session, 0) + 1
            self.sent.move_to_end(session)
            while len(self.sent) > self.capacity:
                self.sent.popitem(last=False)
            self.changed.notify_all()

    def wait(self, session: str, at_least: int, timeout: float) -> bool:
        """Wait until `session` has had `at_least` frames sent, at most `timeout` seconds."""
        with self.changed:
            return self.changed.wait_for(lambda: self.sent.get(session, 0) >= at_least, timeout)


def door_of(request: gr.Request | None) -> tuple[object | None, str | None]:
    """The door in front of the event of `request` (the event's `gr.Request`; the door leaves
    itself in the HTTP request's scope state) and the event's session: (None, None) outside an
    event or without a door (tests, the CLI)."""
    if request is None:
        return None, None
    state = getattr(request, "state", None)  # starlette's `Request.state`, over scope["state"]
    return getattr(state, DOOR_KEY, None), request.session_hash or None


def paced(
    frames: Iterator, group: str, request: gr.Request | None, read_wait: float | None = None
) -> Iterator:
    """`frames` of the event of `request`, each made only once the client has been sent the one
    before the last; ends (closing `frames`) when the client reads nothing for `read_wait`
    seconds (`READ_WAIT_S`). Unpaced without a request or a door (tests, the CLI)."""
    read_wait = READ_WAIT_S if read_wait is None else read_wait
    door, session = door_of(request)
    try:
        if door is None or session is None:
            yield from frames
            return
        base = door.deliveries.count(session)
        for made, frame in enumerate(frames):
            yield frame
            if not door.deliveries.wait(session, base + made, read_wait):
                return  # nobody reads this stream: stop making frames for it
    finally:
        getattr(frames, "close", lambda: None)()
        if door is not None and session is not None:
            door.stream_ended(session, group)


def deadlined(
    frames: Iterator,
    wall_s: float,
    cpu_s: float,
    what: str,
    clock: Callable[[], float] = time.monotonic,
    cpu: Callable[[], float] = time.thread_time,
) -> Iterator:
    """`frames` stopped with a message once `wall_s` seconds have passed since the first, or its
    own steps have taken `cpu_s` seconds of CPU."""
    started, spent = clock(), 0.0
    try:
        while True:
            before = cpu()
            try:
                frame = next(frames)
            except StopIteration:
                return
            spent += cpu() - before
            yield frame
            if clock() - started > wall_s or spent > cpu_s:
                limit = f"{wall_s:g} s" if clock() - started > wall_s else f"{cpu_s:g} s of CPU"
                raise gr.Error(f"The {what} passed this app's limit of {limit} and was stopped.")
    finally:
        frames.close()


def limited_run(fn: Callable[..., Iterator]) -> Callable[..., Iterator]:
    """A model run's callback (a generator function whose first parameter is the event's
    `gr.Request`, which Gradio passes by its type hint; None outside an event) with the run's
    wall-time limit (`ui.queue_limits.time_limited`) and its frames paced by its client's
    reading (`paced`). Gradio reads `fn`'s signature through the wrapper (`functools.wraps`)."""
    from ui.queue_limits import GENERATION, time_limited

    timed = time_limited(fn)

    @functools.wraps(fn)
    def run(request: gr.Request | None, *args, **kwargs):
        yield from paced(timed(request, *args, **kwargs), GENERATION, request)

    return run
