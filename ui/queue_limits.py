"""How long the web app's queue may grow, and how long a model run may take.

Every event that runs a model (Arena runs and presets, Experiments sweeps) is in the concurrency
group `GENERATION`, which runs one at a time. Gradio bounds only the whole queue, so one client
with many queued runs would make the cheap reads (leaderboard, theory, about) answer "Queue is
full" too. `limit_generation` checks each new model run before it joins: at most `per_client` per
client and `total` for everyone, each refused with a message that says why. A client is the
signed-in user, else the address the request came from (`client_key`): a browser tab, a
gradio_client session and a raw `/gradio_api/call/...` request from one address are one client.
Cheap reads are never counted, so they keep answering. Each model run also has a wall-time
limit (`time_limited`): past it the run is closed (its generator's `finally` frees what it held)
and the visitor reads why. A client that leaves (its stream closes) has its runs cancelled by
gradio: waiting ones leave the queue, a running one's generator is closed at its next frame. Runs
yield a frame at least every second or so (an Arena run per rendered token batch, a sweep a
heartbeat while a question runs), and closing one sets the engine's stop flag, which it reads
between decoding steps: a run stops within seconds of its limit or of its client leaving.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import time
from collections.abc import Callable, Iterator

import gradio as gr

from rrdemo.errors import RRError

GENERATION = "model"  # the concurrency group of every event that runs a model
GENERATION_TOTAL = 16  # a 2-core CPU Space runs one at a time; more waiters would time out
GENERATION_PER_CLIENT = 2  # one running and one waiting
RUN_SECONDS_ENV = "RRDEMO_RUN_SECONDS"
DEFAULT_RUN_SECONDS = 600  # a live 1.5B run on Logic3 takes about a minute
PROXY_HOPS_ENV = "RRDEMO_PROXY_HOPS"  # proxies in front of the app (a Space has one)
SESSIONS_ENV = "RRDEMO_SESSIONS"
DEFAULT_SESSIONS = 500  # sessions whose state gradio keeps (~0.5 MB each here, plus a run's view)


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


def generation_events(queue) -> list:
    """The model runs waiting or running now in gradio's `queue` (`demo._queue`)."""
    waiting = queue.event_queue_per_concurrency_id.get(GENERATION)
    events = list(waiting.queue) if waiting is not None else []
    for job in queue.active_jobs:
        events += [event for event in job or () if event.concurrency_id == GENERATION]
    return events


def refusal(owners: list[str], client: str, total: int, per_client: int) -> str | None:
    """Why a new model run of `client` may not join, given the clients of the runs waiting or
    running now (`owners`), or None when it may."""
    if owners.count(client) >= per_client:
        return (
            f"You already have {per_client} runs waiting or running: wait for one to finish "
            "(or press Stop), then start another."
        )
    if len(owners) >= total:
        return (
            f"The model queue is full ({total} runs waiting or running); the Theory, "
            "Leaderboard and About tabs still answer. Try again in a few minutes."
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


def _owners(queue) -> list[str]:
    """The client of each model run waiting or running in `queue`."""
    return [
        client_key(event.request, event.username) if event.request is not None else "unknown"
        for event in generation_events(queue)
    ]


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


def limit_generation(
    demo: gr.Blocks, total: int = GENERATION_TOTAL, per_client: int = GENERATION_PER_CLIENT
) -> RawSessions:
    """Refuse model runs beyond the limits when they ask to join `demo`'s queue, give each a
    wall-time limit, and free raw API sessions when their event ends (call after
    `demo.queue()`)."""
    for fn in demo.fns.values():
        if fn.concurrency_id == GENERATION and inspect.isgeneratorfunction(fn.fn):
            fn.fn = time_limited(fn.fn)
    queue = demo._queue
    join = queue.push
    lock = asyncio.Lock()  # a check and its join happen together: two requests cannot both pass
    raw = RawSessions(demo)

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
        async with lock:
            if fn is not None and fn.concurrency_id == GENERATION:
                reason = refusal(_owners(queue), client_key(request, username), total, per_client)
                if reason is not None:  # shown like a validation message, by page and clients
                    refused = {"__type__": "validate", "is_valid": False, "message": reason}
                    return False, [{**refused, "parameter_name": "limit"}], "validator_error"
            joined, event_id, state = await join(body, request, username)
            if joined and fresh:
                raw.add(event_id)  # a fresh session's hash is its event's id
            return joined, event_id, state

    queue.push = push
    return raw
