"""The queue's door: every event is checked before gradio sees it, by an ASGI middleware.

Gradio has one route per way of starting an event (`/queue/join` for the page and
gradio_client, `/call/<api>` for raw API calls, `/run/<api>` and `/api/<api>`), and every one of
them goes through `QueueDoor`. It reads the request's body (bounded by `ui.door.BodyLimit`), finds
the event it names among the app's events (`Blocks.fns`; an unknown one is answered 404), checks
its values (`payload_refusal`), the calls of events outside the queue (`CallBudget`), the limits
of its group and of its client (`Ledger`, `refusal`) and the sessions its client starts
(`SessionBudget`), then hands the same bytes to gradio. A refusal is gradio's own validation
reply (HTTP 422, a `ValidationError` in gradio_client, a message beside the inputs on the page),
or HTTP 429 for a budget.

The ledger holds the events the door let in until they end: when their completion goes down a
stream (`/queue/data`, `/call/<api>/<id>`), when they are cancelled (`/cancel`, or their client's
stream or heartbeat closes: gradio then cancels them), when a stream's generator ends
(`ui.streams.paced` tells the door), or, for an event nobody reads, after a hold long enough for
it to have run (`hold_seconds`). The door also counts the frames sent down each stream
(`ui.streams.Deliveries`) so that streams make a frame only once the one before was sent.
"""

from __future__ import annotations

import json
import re
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import parse_qs

import gradio as gr
from starlette.requests import Request

from ui.door import read_body, replayed, reply
from ui.queue_limits import (
    CALLS_ENV,
    DEFAULT_CALLS_PER_MINUTE,
    EVENTS_PER_CLIENT,
    GENERATION,
    REPLAY,
    CallBudget,
    SessionBudget,
    client_key,
    payload_refusal,
    refusal,
    run_seconds,
    session_capacity,
    session_window,
    sessions_per_client,
    whole_setting,
)
from ui.streams import DOOR_KEY, Deliveries

API = "/gradio_api/"
REPLAY_HOLD_S = 300.0  # an unread replay waits for a slot (eight play at once), then ends
QUICK_HOLD_S = 60.0  # any other event answers in well under a second once it runs
_COMPLETED = re.compile(rb'^data: \{"msg":"process_completed","event_id":"([^"]+)"')
_GENERATING = re.compile(rb'^data: \{"msg":"process_(generating|streaming)"')


def hold_seconds(group: str) -> float:
    """How long an event of `group` is counted when nobody sees it end."""
    if group == GENERATION:
        return 2.0 * run_seconds()
    return REPLAY_HOLD_S if group == REPLAY else QUICK_HOLD_S


@dataclass
class Live:
    """An event the door let in: whose, of which group, in which session, since when."""

    client: str
    group: str
    session: str | None
    since: float
    event: str | None = None  # its id, once gradio answered the join


class Ledger:
    """The events waiting or running now, as the door saw them join and end."""

    def __init__(self, clock=time.monotonic, hold=hold_seconds) -> None:
        self.clock, self.hold = clock, hold
        self.live: dict[int, Live] = {}
        self.tokens = 0
        self.ended: OrderedDict[str, None] = OrderedDict()  # ended before their join answered
        self.lock = threading.Lock()

    def _expire(self) -> None:
        now = self.clock()
        for token, live in list(self.live.items()):
            if now - live.since > self.hold(live.group):
                del self.live[token]

    def reserve(self, client: str, group: str, session: str | None, per_client: int):
        """(token, None) with a place held for the event, or (None, why it may not join)."""
        with self.lock:
            self._expire()
            queued = [(live.group, live.client) for live in self.live.values()]
            reason = refusal(queued, client, group, per_client=per_client)
            if reason is not None:
                return None, reason
            self.tokens += 1
            self.live[self.tokens] = Live(client, group, session, self.clock())
            return self.tokens, None

    def joined(self, token: int, event: str, session: str) -> None:
        with self.lock:
            live = self.live.get(token)
            if live is None:
                return
            if event in self.ended:  # it ended before gradio's answer reached the door
                del self.ended[event], self.live[token]
            else:
                live.event, live.session = event, session

    def drop(self, token: int) -> None:
        with self.lock:
            self.live.pop(token, None)

    def _end(self, match) -> list[Live]:
        gone = [t for t, live in self.live.items() if match(live)]
        return [self.live.pop(t) for t in gone]

    def end_event(self, event: str) -> None:
        with self.lock:
            if not self._end(lambda live: live.event == event):
                self.ended[event] = None
                while len(self.ended) > 4096:
                    self.ended.popitem(last=False)

    def end_session(self, session: str) -> None:
        with self.lock:
            self._end(lambda live: live.session == session)

    def end_oldest(self, session: str, group: str) -> None:
        with self.lock:
            mine = [t for t, v in self.live.items() if (v.session, v.group) == (session, group)]
            if mine:
                del self.live[min(mine)]

    def session_of(self, event: str) -> str | None:
        with self.lock:
            return next((live.session for live in self.live.values() if live.event == event), None)

    def held(self, client: str | None = None, group: str | None = None) -> int:
        """How many events are counted now (of `client`, of `group`)."""
        with self.lock:
            self._expire()
            return sum(
                client in (None, live.client) and group in (None, live.group)
                for live in self.live.values()
            )


class Door:
    """What the door of one app knows: its events, the ledger, the budgets, the deliveries."""

    def __init__(self, demo: gr.Blocks, per_client: int = EVENTS_PER_CLIENT) -> None:
        self.demo, self.per_client = demo, per_client
        self.ledger = Ledger()
        self.calls = CallBudget(whole_setting(CALLS_ENV, DEFAULT_CALLS_PER_MINUTE, 1))
        self.sessions = SessionBudget(sessions_per_client(), session_window(), session_capacity())
        self.deliveries = Deliveries()

    def event_fn(self, route: str, body: dict):
        """The event a join names (by `fn_index`, or by the api name in its route), None when the
        app has no such event, or False when gradio itself is to answer (no index given)."""
        fns = self.demo.fns
        if route.startswith("call/"):
            name = route.removeprefix("call/").removeprefix("v2/").strip("/")
            return next((fn for fn in fns.values() if fn.api_name == name), None)
        index = body.get("fn_index")
        if index is None:
            return False
        return fns.get(index) if isinstance(index, int) and not isinstance(index, bool) else None

    def stream_ended(self, session: str, group: str) -> None:
        """A stream's generator ended (`ui.streams.paced`): its event holds no place now."""
        self.ledger.end_oldest(session, group)


_DOORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def door_of(demo: gr.Blocks) -> Door:
    """The one door of `demo` (made on first use, gone with the demo)."""
    door = _DOORS.get(demo)
    if door is None:
        door = _DOORS[demo] = Door(demo)
    return door


def _validation(reason: str) -> list[dict]:
    """A refusal as gradio writes a validator's: shown beside the inputs by the page, raised as
    a ValidationError by gradio_client, an HTTP 422 with the text on the raw API."""
    return [
        {"__type__": "validate", "is_valid": False, "message": reason, "parameter_name": "limit"}
    ]


class QueueDoor:
    """ASGI middleware: `Door` checks at every join route, and what the streams say."""

    def __init__(self, app, door: Door) -> None:
        self.app, self.door = app, door

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or API not in scope.get("path", ""):
            return await self.app(scope, receive, send)
        scope.setdefault("state", {})[DOOR_KEY] = self.door
        route = scope["path"].split(API, 1)[1]
        method = scope.get("method")
        if method == "POST" and route.startswith(("queue/join", "run/", "api/", "call/")):
            return await self.join(scope, receive, send, route)
        if method == "POST" and route.rstrip("/") == "cancel":
            return await self.cancel(scope, receive, send)
        if method == "GET" and route.rstrip("/") == "queue/data":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            session = (query.get("session_hash") or [""])[0]
            return await self.watch(scope, receive, send, session, None)
        if method == "GET" and route.startswith("call/") and route.count("/") >= 2:
            event = route.rstrip("/").rsplit("/", 1)[1]
            session = self.door.ledger.session_of(event) or event
            return await self.watch(scope, receive, send, session, event)
        if method == "GET" and route.startswith("heartbeat/"):
            try:
                return await self.app(scope, receive, send)
            finally:  # a closed heartbeat: gradio cancels the session's events
                self.door.ledger.end_session(route.removeprefix("heartbeat/").strip("/"))
        return await self.app(scope, receive, send)

    async def join(self, scope, receive, send, route: str) -> None:
        raw, messages = await read_body(receive)
        again = replayed(messages, receive)
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            return await self.app(scope, again, send)  # gradio says what is wrong with it
        if not isinstance(body, dict):
            return await self.app(scope, again, send)
        fn = self.door.event_fn(route, body)
        if fn is False:
            return await self.app(scope, again, send)
        if fn is None:
            return await reply(
                send, 404, "This app has no such endpoint; its endpoints are on its API page."
            )
        values = body.get("data")
        if isinstance(values, list):
            reason = payload_refusal(fn, values)
            if reason is not None:
                return await reply(send, 422, _validation(reason))
        client = client_key(Request(scope))
        if not fn.queue and (reason := self.door.calls.refusal(client)) is not None:
            return await reply(send, 429, reason)
        session = body.get("session_hash") if isinstance(body.get("session_hash"), str) else None
        door = self.door
        token, reason = door.ledger.reserve(client, fn.concurrency_id, session, door.per_client)
        if reason is not None:
            return await reply(send, 422, _validation(reason))
        reason = door.sessions.refusal(client, session)
        if reason is not None:
            door.ledger.drop(token)
            return await reply(send, 429, reason)
        await self.answered(scope, again, send, token, session)

    async def answered(self, scope, receive, send, token: int, session: str | None) -> None:
        """Hand the join to gradio; its answer names the event the door now counts."""
        status, chunks = [0], []

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            elif message["type"] == "http.response.body" and status[0] == 200:
                chunks.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            event = None
            if status[0] == 200:
                try:
                    event = json.loads(b"".join(chunks)).get("event_id")
                except (ValueError, AttributeError):
                    event = None
            if isinstance(event, str):
                self.door.ledger.joined(token, event, session or event)
                if session is None:
                    self.door.sessions.add(event)  # a fresh session is named after its event
            else:
                self.door.ledger.drop(token)

    async def cancel(self, scope, receive, send) -> None:
        raw, messages = await read_body(receive)
        await self.app(scope, replayed(messages, receive), send)
        try:
            event = json.loads(raw).get("event_id")
        except (ValueError, AttributeError, RecursionError):
            return
        if isinstance(event, str):
            self.door.ledger.end_event(event)

    async def watch(self, scope, receive, send, session: str, event: str | None) -> None:
        """Pass a stream on, counting its frames and the completions it carries; once it ends,
        its events are over (finished, or cancelled by gradio as its client left)."""
        door = self.door

        async def sending(message) -> None:
            await send(message)
            if message["type"] != "http.response.body":
                return
            chunk = message.get("body", b"")
            if event is not None:
                if chunk.startswith(b"event: generating"):
                    door.deliveries.add(session)
                return
            if _GENERATING.match(chunk):
                door.deliveries.add(session)
            elif done := _COMPLETED.match(chunk):
                door.ledger.end_event(done.group(1).decode("latin-1"))

        try:
            await self.app(scope, receive, sending)
        finally:
            if event is not None:
                door.ledger.end_event(event)
            elif session:
                door.ledger.end_session(session)
