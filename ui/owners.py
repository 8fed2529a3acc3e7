"""Whose frames a visitor's panels show: the newest run or replay of their session.

The page opens on a recording that plays for some seconds, and a visitor may press Run (or pick
another recording) before it ends. Every stream writes the same panels, so without an owner two
of them would take turns: a live run's frames, then the recording's, then the run's again, and
a recording that ends after Stop would put its "done" back over the stopped run. Here each new
stream claims the session's panels; the stream it replaces is superseded: it sends no further
frame and stops working (a live run stops decoding and frees the model for other visitors).

A new stream shows its first frame only once the stream it replaced has ended (or after
`HANDOVER_S`): that one's last frame is then already queued ahead of the new one's, so it cannot
arrive after them.

A claim ends deterministically, never by the garbage collector: when its stream ends, fails or is
closed, and when its stream is abandoned, that is, left waiting at a frame nobody reads for
`LEASE_S` (Gradio pulls a stream's next frame as soon as it has sent the last one, so a stream
waits that long only when its client went away and the stream was never closed). Every new claim
first sweeps the abandoned ones out, so the table holds at most the streams in flight plus those
left within the last `LEASE_S`. An abandoned stream that is read again later is superseded: it
sends nothing more. Outside a Gradio event (tests, the CLI) there is no session and nothing is
claimed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from ui.state import ArenaState

HANDOVER_S = 10.0  # the longest a new stream waits for the one it replaced to end
LEASE_S = 60.0  # a stream left this long at a frame nobody reads is abandoned


@dataclass(eq=False)
class Claim:
    """One stream's hold on a session's panels."""

    session: str
    superseded: bool = False
    states: list[ArenaState] = field(default_factory=list)  # the stream's state, once it shows one
    ended: threading.Event = field(default_factory=threading.Event)  # its stream has ended
    waiting_since: float | None = None  # when its stream yielded a frame not yet read (monotonic)

    def supersede(self) -> None:
        self.superseded = True
        for state in self.states:
            state.superseded = True  # the stream checks it between engine events

    def abandoned(self, now: float) -> bool:
        """Its stream has waited at an unread frame for longer than the lease."""
        return self.waiting_since is not None and now - self.waiting_since > LEASE_S


_lock = threading.Lock()
_claims: dict[str, Claim] = {}


def session_of(request) -> str | None:
    """The session of the Gradio event of `request` (its `gr.Request`), or None outside one."""
    return getattr(request, "session_hash", None) or None


def _sweep(now: float) -> None:
    """Drop the claims of abandoned streams (with `_lock` held)."""
    for session, held_claim in list(_claims.items()):
        if held_claim.abandoned(now):
            held_claim.supersede()
            del _claims[session]


def claim(session: str, wait: float | None = None) -> Claim:
    """The session's panels now belong to a new stream; the one that held them is superseded,
    and this returns once it has ended (it ends at its next frame), or after `wait` seconds
    (`HANDOVER_S` by default). An abandoned stream is swept out, not waited for."""
    new = Claim(session)
    with _lock:
        _sweep(time.monotonic())
        old = _claims.get(session)
        _claims[session] = new
    if old is not None:
        old.supersede()
        old.ended.wait(HANDOVER_S if wait is None else wait)
    return new


def release(held: Claim) -> None:
    """The stream ended: forget its claim unless a newer stream took the panels since."""
    held.ended.set()
    with _lock:
        if _claims.get(held.session) is held:
            del _claims[held.session]


def holder(session: str) -> Claim | None:
    """The claim that holds `session`'s panels now, if any (abandoned ones swept first)."""
    with _lock:
        _sweep(time.monotonic())
        return _claims.get(session)


def held() -> int:
    """How many streams hold panels now, abandoned ones swept first (the table's size)."""
    with _lock:
        _sweep(time.monotonic())
        return len(_claims)


def reset() -> None:
    """Supersede and forget every claim (tests: no stream of an earlier test holds panels)."""
    with _lock:
        claims = list(_claims.values())
        _claims.clear()
    for held_claim in claims:
        held_claim.supersede()


def owned(frames: Iterator[tuple], session: str | None) -> Iterator[tuple]:
    """`frames` (Arena frames, the state last) while their stream owns the session's panels.

    Claims at once, before the first frame, so a stream already playing ends as this one starts.
    A superseded stream is closed without another frame (its cleanup runs: a live run's KV caches
    are freed)."""
    if session is None:
        yield from frames
        return
    hold = claim(session)
    try:
        for frame in frames:
            state = frame[-1]
            if isinstance(state, ArenaState) and not hold.states:
                hold.states.append(state)
                state.superseded = hold.superseded
            if hold.superseded:
                break
            hold.waiting_since = time.monotonic()
            yield frame
            hold.waiting_since = None
            if hold.superseded:  # taken, or swept as abandoned, while the frame waited
                break
    finally:
        close = getattr(frames, "close", None)
        if close is not None:
            close()
        release(hold)
