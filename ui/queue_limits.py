"""How long the web app's queue may grow, what may join it, and how long a model run may take.

Gradio bounds only the whole queue (`app.QUEUE_MAX_SIZE`), so one client with many queued events
would make everyone else's reads answer "Queue is full". `limit_queue` checks every event before
it joins: its values first (`payload_refusal`: one per input, numbers where numbers are), then
the limits of its concurrency group (`GROUP_LIMITS`: model runs, which run one at a time, and
replays, which play eight at once), then a limit on events of any kind per client, so a single
client can never fill the queue. Each refusal is a message that says why. A client is the
signed-in user, else the address the request came from (`client_key`): a browser tab, a
gradio_client session and a raw `/gradio_api/call/...` request from one address are one client.
Cheap reads are never counted, so they keep answering. Each model run also has a wall-time
limit (`time_limited`): past it the run is closed (its generator's `finally` frees what it held)
and the visitor reads why. A client that leaves (its stream closes) has its events cancelled by
gradio: waiting ones leave the queue, a running one's generator is closed at its next frame. Runs
yield a frame at least every second or so (an Arena run per rendered token batch, a sweep a
heartbeat while a question runs), and closing one sets the engine's stop flag, which it reads
between decoding steps: a run stops within seconds of its limit or of its client leaving.
Two more bounds hold what the queue does not see: the sessions gradio keeps, where one client's
new sessions push out only its own (`SessionQuota`), and the events answered outside the queue,
counted per client and minute (`CallBudget`).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
import os
import threading
import time
from collections import deque
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
# Gradio's queue looks for work every 1 ms when it has none (its progress loop every 10 ms): 7-8%
# of a core for an idle server on Linux, and the same beside every run. 20 ms (50 ms) starts an
# event at most 20 ms later (bench/idle_cpu.py measures both).
QUEUE_POLL_ENV = "RRDEMO_QUEUE_POLL_MS"
DEFAULT_QUEUE_POLL_MS = 20
PROGRESS_POLL_MS = 50


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


def queue_poll_seconds() -> float:
    """How often the queue looks for work when it has none: `RRDEMO_QUEUE_POLL_MS`, default 20
    (1 gives gradio's own pace)."""
    return whole_setting(QUEUE_POLL_ENV, DEFAULT_QUEUE_POLL_MS, 1) / 1000


def session_capacity() -> int:
    """How many visitors' sessions the server keeps in memory, least recently used dropped
    first: `RRDEMO_SESSIONS`, default 500 (gradio's own default is 10000)."""
    return whole_setting(SESSIONS_ENV, DEFAULT_SESSIONS, 1)


def sessions_per_client() -> int:
    """How many of those sessions one client may hold, its own least recently used dropped
    first: `RRDEMO_SESSIONS_PER_CLIENT`, default 64."""
    return whole_setting(SESSIONS_PER_CLIENT_ENV, DEFAULT_SESSIONS_PER_CLIENT, 1)


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


def for_this_client(pool):
    """`pool` as the visitor of the event being processed uses it (`ModelPool.for_client`: its
    hub downloads count against that visitor's hour); `pool` itself outside an event or for
    sources without clients (fakes)."""
    from gradio.context import LocalContext

    request = LocalContext.request.get(None)  # a gr.Request around the HTTP request
    http = getattr(request, "request", None)
    if http is None or not hasattr(pool, "for_client"):
        return pool
    return pool.for_client(client_key(http, getattr(request, "username", None)))


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


def queued_events(queue) -> list:
    """Every event waiting or running now in gradio's `queue` (`demo._queue`), of any group."""
    events = [e for waiting in queue.event_queue_per_concurrency_id.values() for e in waiting.queue]
    for job in queue.active_jobs:
        events += list(job or ())
    return events


def generation_events(queue) -> list:
    """The model runs waiting or running now in gradio's `queue` (`demo._queue`)."""
    return [event for event in queued_events(queue) if event.concurrency_id == GENERATION]


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


def _queued(queue) -> list[tuple[str, str]]:
    """The (group, client) of each event waiting or running in `queue`."""
    return [
        (
            event.concurrency_id,
            client_key(event.request, event.username) if event.request is not None else "unknown",
        )
        for event in queued_events(queue)
    ]


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


class RawSessions:
    """Sessions of raw API calls (`/gradio_api/call/...` without a session hash): gradio makes a
    new session per call and keeps its state (a copy of every component's config, ~0.5 MB here)
    and its unread messages until 10000 sessions pile up. Nobody can call into such a session
    again, so its state goes when its event ends and its unread messages `grace` seconds later."""

    def __init__(self, blocks: gr.Blocks, grace: float = 60.0, clock=time.monotonic) -> None:
        self.blocks, self.grace, self.clock = blocks, grace, clock
        self.ended: dict[str, float | None] = {}  # session -> when its event ended (None: live)

    def add(self, session: str) -> None:
        self.ended[session] = None

    def sweep(self) -> None:
        queue, now = self.blocks._queue, self.clock()
        for session, ended in list(self.ended.items()):
            if session in queue.event_ids_to_events:
                continue  # waiting or running
            self.blocks.state_holder.session_data.pop(session, None)
            if ended is None:
                self.ended[session] = now
            elif now - ended > self.grace:  # the client has had its result's window
                queue.pending_messages_per_session.pop(session, None)
                queue.pending_event_ids_session.pop(session, None)
                del self.ended[session]


class SessionQuota:
    """Who owns each session gradio keeps, so that one client's new sessions push out only its
    own. Gradio's `StateHolder` keeps `capacity` sessions and drops the least recently used of
    all, whoever made the new one: 600 fresh session hashes from one address dropped another
    visitor's finished sweep. Here a client holding `per_client` sessions loses its own least
    recently used one when it makes another, and a full pool drops the least recently used
    session of the client that holds the most (a session whose owner is not known counts as a
    client of its own). Owners are recorded when an event joins the queue (`own`)."""

    def __init__(self, per_client: int) -> None:
        self.per_client = per_client
        self.owners: dict[str, str] = {}  # session hash -> client
        self.holder = None

    def own(self, session: str, client: str) -> None:
        self.owners.setdefault(session, client)

    def install(self, holder) -> None:
        """Put this quota in charge of `holder`'s evictions (a gradio StateHolder)."""
        if self.holder is not holder:
            self.holder = holder
            holder.update = self.update

    def update(self, session: str) -> None:
        """`StateHolder.update`: mark `session` as just used, then drop what is over the limits."""
        holder = self.holder
        with holder.lock:
            data = holder.session_data
            if session in data:
                data.move_to_end(session)
            client = self.owners.get(session)
            if client is not None:
                mine = [s for s in data if self.owners.get(s) == client]
                for evicted in mine[: max(0, len(mine) - self.per_client)]:
                    self._drop(evicted)
            while len(data) > holder.capacity:
                held: dict[str, int] = {}
                for s in data:
                    owner = self.owners.get(s, s)
                    held[owner] = held.get(owner, 0) + 1
                most = max(held.values())
                self._drop(next(s for s in data if held[self.owners.get(s, s)] == most))
            if len(self.owners) > 4 * holder.capacity:  # owners of sessions long gone
                self.owners = {s: c for s, c in self.owners.items() if s in data}

    def _drop(self, session: str) -> None:
        self.holder.session_data.pop(session, None)
        self.holder.time_last_used.pop(session, None)
        self.owners.pop(session, None)


CALLS_ENV = "RRDEMO_CALLS_PER_MINUTE"  # calls of events outside the queue per client per minute
DEFAULT_CALLS_PER_MINUTE = 600


class CallBudget:
    """Events outside the queue (`queue=False`: control updates, a chooser's first step) are
    answered at once, so the queue's limits never see them; each client may make `per_minute`
    calls of them in any minute (a sliding window), enough for a visitor dragging a slider."""

    def __init__(self, per_minute: int = DEFAULT_CALLS_PER_MINUTE, clock=time.monotonic) -> None:
        self.per_minute, self.clock = per_minute, clock
        self.calls: dict[str, deque[float]] = {}
        self.lock = threading.Lock()

    def refusal(self, client: str) -> str | None:
        """Why `client` may not call now, or None (then the call is counted)."""
        now = self.clock()
        with self.lock:
            for key in list(self.calls):  # forget what left the window (bounded memory)
                calls = self.calls[key]
                while calls and now - calls[0] >= 60:
                    calls.popleft()
                if not calls:
                    del self.calls[key]
            calls = self.calls.setdefault(client, deque())
            if len(calls) >= self.per_minute:
                return (
                    f"Too many requests: at most {self.per_minute} a minute from one visitor "
                    "for this action. Try again in a minute."
                )
            calls.append(now)
        return None

    def limited(self, fn: Callable) -> Callable:
        """`fn` (a plain function) counted against the calling client's minute."""

        @functools.wraps(fn)
        def counted(*args, **kwargs):
            from gradio.context import LocalContext

            request = LocalContext.request.get(None)
            http = getattr(request, "request", None)
            if http is not None:
                reason = self.refusal(client_key(http, getattr(request, "username", None)))
                if reason is not None:
                    raise gr.Error(reason)
            return fn(*args, **kwargs)

        return counted


def _refused(reason: str) -> tuple[bool, list, str]:
    """A refusal as gradio's queue returns a validator's: shown beside the inputs by the page,
    raised as a ValidationError by gradio_client, an HTTP 422 with the text on the raw API."""
    refused = {"__type__": "validate", "is_valid": False, "message": reason}
    return False, [{**refused, "parameter_name": "limit"}], "validator_error"


def limit_queue(demo: gr.Blocks, per_client: int = EVENTS_PER_CLIENT) -> RawSessions:
    """Check every event when it asks to join `demo`'s queue (call after `demo.queue()`): its
    values (`payload_refusal`), then the limits of its group (`GROUP_LIMITS`: model runs,
    replays) and the `per_client` limit on any event, so no client fills gradio's queue. Model
    runs get a wall-time limit; raw API sessions are freed when their event ends."""
    calls = CallBudget(whole_setting(CALLS_ENV, DEFAULT_CALLS_PER_MINUTE, 1))
    for fn in demo.fns.values():
        if fn.concurrency_id == GENERATION and inspect.isgeneratorfunction(fn.fn):
            fn.fn = time_limited(fn.fn)
        plain = fn.fn is not None and not (
            inspect.isgeneratorfunction(fn.fn)
            or inspect.iscoroutinefunction(fn.fn)
            or inspect.isasyncgenfunction(fn.fn)
        )
        if not fn.queue and plain:
            fn.fn = calls.limited(fn.fn)
    queue = demo._queue
    queue.sleep_when_free = queue_poll_seconds()
    queue.progress_update_sleep_when_free = max(
        queue.progress_update_sleep_when_free, PROGRESS_POLL_MS / 1000
    )
    join = queue.push
    lock = asyncio.Lock()  # a check and its join happen together: two requests cannot both pass
    raw = RawSessions(demo)
    quota = SessionQuota(sessions_per_client())

    async def sweeping() -> None:
        while not queue.stopped:
            raw.sweep()
            await asyncio.sleep(5)

    started: list[asyncio.Task] = []

    async def push(body, request, username):
        if not started:  # the server's event loop runs now
            started.append(asyncio.get_running_loop().create_task(sweeping()))
        fresh = body.session_hash is None
        fn = demo.fns.get(body.fn_index) if body.fn_index is not None else None
        if fn is not None:
            reason = payload_refusal(fn, body.data)
            if reason is not None:
                return _refused(reason)
        client = client_key(request, username)
        async with lock:
            if fn is not None:
                reason = refusal(_queued(queue), client, fn.concurrency_id, per_client=per_client)
                if reason is not None:
                    return _refused(reason)
            joined, event_id, state = await join(body, request, username)
            if joined:
                quota.install(demo.state_holder)
                quota.own(body.session_hash, client)  # set by the join when it was fresh
            if joined and fresh:
                raw.add(event_id)  # a fresh session's hash is its event's id
            return joined, event_id, state

    queue.push = push
    return raw
