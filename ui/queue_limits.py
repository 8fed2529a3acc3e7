"""How long the web app's queue may grow, what may join it, and how long a stream may take.

Gradio bounds only the whole queue (`app.QUEUE_MAX_SIZE`), so one client with many queued events
would make everyone else's reads answer "Queue is full". Every event is checked at the door, by
an ASGI middleware in front of gradio's routes (`ui.queue_door.QueueDoor`), before it joins: its
values first (`payload_refusal`: one per input, numbers where numbers are), then the limits of
its concurrency group (`GROUP_LIMITS`: model runs, which run one at a time, and replays, which
play eight at once), then a limit on events of any kind per client (`refusal`), so a single
client can never fill the queue. Each refusal is a message that says why. A client is the
signed-in user, else the address the request came from (`client_key`): a browser tab, a
gradio_client session and a raw `/gradio_api/call/...` request from one address are one client.
Two more budgets count what the queue does not: new sessions per client (`SessionBudget`: a
session gradio keeps holds a copy of the page's config, and its pool is shared by everyone) and
events outside the queue (`CallBudget`). Nothing here reads or writes gradio's internals: the
door sees the requests and the streams they answer, and the streams themselves
(`time_limited`, `ui.streams`) say when they end.

Each model run also has a wall-time limit (`time_limited`): past it the run is closed (its
generator's `finally` frees what it held) and the visitor reads why. A client that leaves (its
stream closes) has its events cancelled by gradio: waiting ones leave the queue, a running one's
generator is closed at its next frame. Runs yield a frame at least every second or so, and
closing one sets the engine's stop flag, which it reads between decoding steps.
"""

from __future__ import annotations

import functools
import math
import os
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import gradio as gr
from gradio.utils import get_upload_folder

from rrdemo.errors import RRError

GENERATION = "model"  # the concurrency group of every event that runs a model
GENERATION_TOTAL = 16  # a 2-core CPU Space runs one at a time; more waiters would time out
GENERATION_PER_CLIENT = 2  # one running and one waiting
REPLAY = "replay"  # the concurrency group of recorded runs played back (ui.replay)
REPLAY_TOTAL = 32  # eight play at once; a replay takes about 12 s
REPLAY_PER_CLIENT = 2
EVENTS_PER_CLIENT = 16  # events of any kind one client may have waiting or running (a page
# load starts about six); gradio's queue holds 256 for everyone (app.QUEUE_MAX_SIZE)
RUN_SECONDS_ENV = "RRDEMO_RUN_SECONDS"
DEFAULT_RUN_SECONDS = 600  # a live 1.5B run on Logic3 takes about a minute
PROXY_HOPS_ENV = "RRDEMO_PROXY_HOPS"  # proxies in front of the app (a Space has one)
SESSIONS_ENV = "RRDEMO_SESSIONS"
DEFAULT_SESSIONS = 500  # sessions whose state gradio keeps (~0.5 MB each here, plus a run's view)
SESSIONS_PER_CLIENT_ENV = "RRDEMO_SESSIONS_PER_CLIENT"
DEFAULT_SESSIONS_PER_CLIENT = 64  # tabs and API sessions of one client (a classroom behind a NAT)
SESSION_WINDOW_ENV = "RRDEMO_SESSION_WINDOW_S"
DEFAULT_SESSION_WINDOW = 600  # the window in which one client may start that many sessions


def whole_setting(name: str, default: int, least: int) -> int:
    """Environment variable `name` as a whole number of at least `least` (read when called)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) < least:
        raise RRError(f"{name} must be a whole number of at least {least}, got {text!r}")
    return int(text)


def run_seconds() -> int:
    """The wall-time limit of one model run: `RRDEMO_RUN_SECONDS`, default 600."""
    return whole_setting(RUN_SECONDS_ENV, DEFAULT_RUN_SECONDS, 1)


def session_capacity() -> int:
    """How many visitors' sessions the server keeps in memory, least recently used dropped
    first: `RRDEMO_SESSIONS`, default 500 (gradio's own default is 10000)."""
    return whole_setting(SESSIONS_ENV, DEFAULT_SESSIONS, 1)


def sessions_per_client() -> int:
    """How many new sessions one client may start per window (`session_window`):
    `RRDEMO_SESSIONS_PER_CLIENT`, default 64."""
    return whole_setting(SESSIONS_PER_CLIENT_ENV, DEFAULT_SESSIONS_PER_CLIENT, 1)


def session_window() -> int:
    """The window of `sessions_per_client` in seconds: `RRDEMO_SESSION_WINDOW_S`, default 600."""
    return whole_setting(SESSION_WINDOW_ENV, DEFAULT_SESSION_WINDOW, 1)


def client_key(request, username: str | None = None) -> str:
    """Who sent `request` (a starlette request): the signed-in user (gradio login or Hugging Face
    OAuth), else the client's address. Behind `RRDEMO_PROXY_HOPS` proxies (default 1 on a Space,
    else 0) the address is the one the outermost trusted proxy appended to X-Forwarded-For;
    anything a client writes further left is ignored."""
    if username:
        return f"user:{username}"
    if "session" in request.scope:  # SessionMiddleware: the app has a "Sign in" button
        oauth = request.session.get("oauth_info") or {}
        user = (oauth.get("userinfo") or {}).get("preferred_username")
        if user:
            return f"user:{user}"
    hops = whole_setting(PROXY_HOPS_ENV, 1 if os.environ.get("SPACE_ID") else 0, 0)
    forwarded = [a.strip() for a in request.headers.get("x-forwarded-for", "").split(",")]
    forwarded = [a for a in forwarded if a]
    if hops and len(forwarded) >= hops:
        return f"ip:{forwarded[-hops]}"
    return f"ip:{request.client.host if request.client else 'unknown'}"


def client_of(request: gr.Request | None) -> str | None:
    """Who sent the event of `request` (its `gr.Request`, `client_key` of the HTTP request it
    wraps), or None outside an event (tests, the CLI)."""
    http = getattr(request, "request", None) if request is not None else None
    if http is None:
        return None
    return client_key(http, request.username)


def for_this_client(pool, client: str | None):
    """`pool` as `client` (`client_of` the event) uses it (`ModelPool.for_client`: its hub
    downloads count against that visitor's hour); `pool` itself without a client (outside an
    event) or for sources without clients (fakes)."""
    if client is None or not hasattr(pool, "for_client"):
        return pool
    return pool.for_client(client)


@dataclass(frozen=True)
class GroupLimit:
    """How many events of one concurrency group may wait or run: per client and for everyone."""

    what: str  # what the visitor calls them ("runs", "replays")
    verb: str  # what they do while they hold a slot ("running", "playing")
    per_client: int
    total: int


GROUP_LIMITS = {
    GENERATION: GroupLimit("runs", "running", GENERATION_PER_CLIENT, GENERATION_TOTAL),
    REPLAY: GroupLimit("replays", "playing", REPLAY_PER_CLIENT, REPLAY_TOTAL),
}


def refusal(
    queued: list[tuple[str, str]],
    client: str,
    group: str,
    groups: dict[str, GroupLimit] = GROUP_LIMITS,
    per_client: int = EVENTS_PER_CLIENT,
) -> str | None:
    """Why a new event of `group` from `client` may not join, given the (group, client) of each
    event waiting or running now (`queued`), or None when it may."""
    mine = [g for g, c in queued if c == client]
    limit = groups.get(group)
    if limit is not None:
        if mine.count(group) >= limit.per_client:
            return (
                f"You already have {limit.per_client} {limit.what} waiting or {limit.verb}: wait "
                "for one to finish (or press Stop), then start another."
            )
        if sum(g == group for g, _ in queued) >= limit.total:
            kind = "model queue" if group == GENERATION else f"{group} queue"
            return (
                f"The {kind} is full ({limit.total} {limit.what} waiting or {limit.verb}); the "
                "Theory, Leaderboard and About tabs still answer. Try again in a few minutes."
            )
    if len(mine) >= per_client:
        return (
            f"You already have {per_client} requests waiting or running: wait for them to "
            "finish, then try again."
        )
    return None


def time_limited(
    fn: Callable[..., Iterator], seconds: Callable[[], int] = run_seconds, clock=time.monotonic
) -> Callable[..., Iterator]:
    """`fn` (a generator function) stopped once it has run `seconds()`: checked at each frame
    it yields; the generator is closed (its `finally` runs) and the visitor reads why."""

    @functools.wraps(fn)
    def limited(*args, **kwargs):
        limit, started = seconds(), clock()
        frames = fn(*args, **kwargs)
        try:
            for frame in frames:
                yield frame
                if clock() - started > limit:
                    raise gr.Error(
                        f"The run passed this app's time limit of {limit} s and was stopped "
                        f"({RUN_SECONDS_ENV}); try fewer agents, tokens or questions."
                    )
        finally:
            frames.close()

    return limited


def _kind(value) -> str:
    """What a visitor sent, in words; their own text is never echoed back."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return repr(value)
    return {str: "a text", list: "a list", dict: "an object"}.get(type(value), "another value")


def _number_refusal(block, value) -> str | None:
    """Why `value` cannot be the number of `block` (a gr.Number or gr.Slider), or None."""
    name = getattr(block, "label", None) or block.get_block_name()
    if value is None and isinstance(block, gr.Number):
        return None  # an empty number box: the callback says whether it needs one
    whole = getattr(block, "precision", None) == 0
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or (whole and value != int(value)):
        wanted = "a whole number" if whole else "a number"
        return f"{name} must be {wanted}, got {_kind(value)}."
    return None


def _file_refusal(block, value) -> str | None:
    """Why `value` cannot be the file of `block` (a gr.File), or None: a file this app received
    through its upload route (what gradio_client's `handle_file` sends), or nothing. One text for
    every refused value, so a reply says nothing about the server's files."""
    if value is None:
        return None
    path = value.get("path") if isinstance(value, dict) else None
    folder = os.path.realpath(get_upload_folder())
    inside = isinstance(path, str) and "\0" not in path
    if inside:
        real = os.path.realpath(path)
        inside = real != folder and real.startswith(folder + os.sep)
    if not inside:
        name = getattr(block, "label", None) or "the file"
        return f"{name}: send a file uploaded to this app (the page's upload, or handle_file)."
    return None


def payload_refusal(fn, data: list) -> str | None:
    """Why the values `data` cannot be sent to the event `fn`, or None: one value per input,
    and a number where a number box or slider is (the callbacks of events with
    `preprocess=False` check their own values, and say which is wrong), and a file where a file
    is."""
    wanted = len(fn.inputs)
    if len(data) != wanted:
        return f"This endpoint takes {wanted} values, got {len(data)}; see the app's API page."
    if not fn.preprocess:
        return None
    for block, value in zip(fn.inputs, data, strict=True):
        reason = None
        if isinstance(block, (gr.Number, gr.Slider)):
            reason = _number_refusal(block, value)
        elif isinstance(block, gr.File) and block.file_count == "single":
            reason = _file_refusal(block, value)
        if reason is not None:
            return reason
    return None


class _Window:
    """Per-client times of what was counted in the last `window` seconds (bounded: a client with
    nothing in the window is forgotten)."""

    def __init__(self, window: float, clock: Callable[[], float]) -> None:
        self.window, self.clock = window, clock
        self.counted: dict[str, deque[float]] = {}
        self.lock = threading.Lock()

    def take(self, client: str, most: int) -> bool:
        """Count one for `client` unless it has `most` in the window already (then False)."""
        now = self.clock()
        with self.lock:
            for key in list(self.counted):
                times = self.counted[key]
                while times and now - times[0] >= self.window:
                    times.popleft()
                if not times:
                    del self.counted[key]
            times = self.counted.setdefault(client, deque())
            if len(times) >= most:
                return False
            times.append(now)
        return True


CALLS_ENV = "RRDEMO_CALLS_PER_MINUTE"  # calls of events outside the queue per client per minute
DEFAULT_CALLS_PER_MINUTE = 600


class CallBudget:
    """Events outside the queue (`queue=False`: control updates, a chooser's first step) answer
    at once; each client may make `per_minute` calls of them in any minute (a sliding window),
    enough for a visitor dragging a slider."""

    def __init__(self, per_minute: int = DEFAULT_CALLS_PER_MINUTE, clock=time.monotonic) -> None:
        self.per_minute = per_minute
        self.calls = _Window(60, clock)

    def refusal(self, client: str) -> str | None:
        """Why `client` may not call now, or None (then the call is counted)."""
        if self.calls.take(client, self.per_minute):
            return None
        return (
            f"Too many requests: at most {self.per_minute} a minute from one visitor for this "
            "action. Try again in a minute."
        )


class SessionBudget:
    """New sessions per client: gradio keeps the state of `session_capacity()` sessions and drops
    the least recently used of all, so a client making sessions without end would push out
    everyone else's (600 fresh session hashes from one address dropped another visitor's
    finished sweep). Each client may start `per_client` sessions per `window` seconds, on every
    route (a page load, a gradio_client, a raw `/call/` request, `/run/predict`); one session
    used again is not new. A session is known from its first event (`known`, bounded)."""

    def __init__(self, per_client: int, window: float, capacity: int, clock=time.monotonic):
        self.per_client, self.window = per_client, window
        self.started = _Window(window, clock)
        self.known: OrderedDict[str, None] = OrderedDict()  # sessions seen, most recent last
        self.capacity = 4 * capacity  # sessions remembered: beyond gradio's pool, long gone
        self.lock = threading.Lock()

    def refusal(self, client: str, session: str | None) -> str | None:
        """Why `client` may not start `session` (None: a fresh one per call), or None (then it is
        counted, and known from now on)."""
        with self.lock:
            if session is not None and session in self.known:
                self.known.move_to_end(session)
                return None
        if not self.started.take(client, self.per_client):
            minutes = max(1, round(self.window / 60))
            return (
                f"Too many new sessions: at most {self.per_client} per {minutes} minutes from one "
                "visitor (each page load, client or raw API call starts one). Reuse your "
                "gradio_client session, or try again later."
            )
        if session is not None:
            self.add(session)
        return None

    def add(self, session: str) -> None:
        with self.lock:
            self.known[session] = None
            self.known.move_to_end(session)
            while len(self.known) > self.capacity:
                self.known.popitem(last=False)
