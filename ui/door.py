"""The first limit every request meets: the size of its body, before gradio reads a byte of it.

`BodyLimit` is a pure ASGI middleware in front of the whole app (`app.serve` adds it first, through
`launch(app_kwargs={"middleware": ...})`): a request whose Content-Length is over the limit is
answered HTTP 413 at once, without reading its body; one that does not say its length (chunked)
has its bytes counted as they arrive and is answered 413 as soon as the count passes the limit,
so no route ever holds more than the limit of one request's body. The limit is
`RRDEMO_MAX_BODY_MB` MiB (default 4: an upload is at most 2 MiB a file, a model run's values a
few kB; docs/security.md). `read_body` and `replayed` let a later middleware read a body that is
bounded by then, and hand the same bytes to gradio.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

BODY_ENV = "RRDEMO_MAX_BODY_MB"
DEFAULT_BODY_MB = 4

Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]


def body_limit() -> int:
    """The largest request body in bytes: `RRDEMO_MAX_BODY_MB` MiB, default 4."""
    from ui.queue_limits import whole_setting

    return whole_setting(BODY_ENV, DEFAULT_BODY_MB, 1) * 2**20


def too_large(limit: int) -> str:
    return (
        f"The request is larger than this app's limit of {limit >> 20} MiB ({BODY_ENV}); "
        "send less (an upload is at most 2 MiB a file)."
    )


async def reply(send: Send, status: int, detail: str, headers: list | None = None) -> None:
    """A JSON reply `{"detail": ...}` with `status`, as gradio's own errors are written."""
    body = json.dumps({"detail": detail}).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": head + (headers or [])})
    await send({"type": "http.response.body", "body": body})


class BodyTooLarge(Exception):
    """Raised into the app by `BodyLimit`'s receive once the body passes the limit."""


class BodyLimit:
    """ASGI middleware: no request body over `limit` bytes (default `body_limit()`) reaches the
    app; it is answered 413 from its Content-Length, or once its streamed bytes pass the limit."""

    def __init__(self, app, limit: int | None = None) -> None:
        self.app = app
        self.limit = limit if limit is not None else body_limit()

    async def __call__(self, scope: dict, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length", b"")
        if length.isdigit() and int(length) > self.limit:
            return await reply(send, 413, too_large(self.limit), [(b"connection", b"close")])
        counted, over, started = [0], [False], [False]

        async def counting() -> dict:
            message = await receive()
            if message["type"] == "http.request":
                counted[0] += len(message.get("body", b""))
                if counted[0] > self.limit:
                    over[0] = True
                    raise BodyTooLarge(too_large(self.limit))
            return message

        async def sending(message: dict) -> None:
            if over[0] and not started[0]:
                return  # the app's own answer to a cut body is replaced by the 413 below
            started[0] = True
            await send(message)

        try:
            await self.app(scope, counting, sending)
        except BodyTooLarge:
            pass
        except Exception:
            if not over[0]:
                raise
        if over[0] and not started[0]:
            await reply(send, 413, too_large(self.limit), [(b"connection", b"close")])


async def read_body(receive: Receive) -> tuple[bytes, list[dict]]:
    """The whole body of a request (bounded by `BodyLimit` in front), and the messages it came in,
    to be handed on unchanged (`replayed`)."""
    chunks, messages = [], []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks), messages


def replayed(messages: list[dict], receive: Receive) -> Receive:
    """A receive that gives `messages` again, then what `receive` gives (a disconnect)."""
    pending = list(messages)

    async def again() -> dict:
        if pending:
            return pending.pop(0)
        return await receive()

    return again
