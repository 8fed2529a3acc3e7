"""How much one client may upload: a count and a byte budget per time window, per client.

Gradio caps each file (`app.MAX_UPLOAD`) but not how many a client sends: one request may hold
dozens of files and requests follow each other without pause. `UploadBudget` is an ASGI
middleware in front of `/gradio_api/upload`: each client (`ui.queue_limits.client_key`: the
signed-in user, else the address) may send `count` upload requests and `megabytes` of request
body per `window` seconds; a request must say its length first, and one over the budget is
refused (HTTP 429) with a message before a byte of it is read, so nothing reaches the disk. An
upload gradio cannot read (a file part without a name) is answered HTTP 400 with what to send,
not a server error. `discard` deletes an uploaded file once the callback that read it is done.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import deque
from pathlib import Path

from starlette.requests import Request

from ui.queue_limits import client_key, whole_setting

log = logging.getLogger(__name__)

UPLOADS_ENV = "RRDEMO_UPLOADS"  # upload requests per client per window
UPLOAD_MB_ENV = "RRDEMO_UPLOAD_MB"  # mebibytes (2**20 bytes) per client per window
UPLOAD_WINDOW_ENV = "RRDEMO_UPLOAD_WINDOW_S"
DEFAULT_UPLOADS, DEFAULT_UPLOAD_MB, DEFAULT_WINDOW = 20, 20, 600


class UploadBudget:
    """ASGI middleware: per-client upload budget (limits read from the environment at start)."""

    def __init__(self, app, clock=time.monotonic) -> None:
        self.app = app
        self.count = whole_setting(UPLOADS_ENV, DEFAULT_UPLOADS, 1)
        self.budget = whole_setting(UPLOAD_MB_ENV, DEFAULT_UPLOAD_MB, 1) * 2**20
        self.window = whole_setting(UPLOAD_WINDOW_ENV, DEFAULT_WINDOW, 1)
        self.clock = clock
        self.spent: dict[str, deque[tuple[float, int]]] = {}  # client -> (when, bytes)
        self.lock = threading.Lock()

    def refusal(self, client: str, size: int | None) -> str | None:
        """Why `client` may not upload `size` more bytes now, or None (then it is counted)."""
        if size is None:
            return "An upload must say its length (Content-Length); it was refused."
        now = self.clock()
        with self.lock:
            for key in list(self.spent):  # forget what left the window (bounded memory)
                spent = self.spent[key]
                while spent and now - spent[0][0] >= self.window:
                    spent.popleft()
                if not spent:
                    del self.spent[key]
            spent = self.spent.setdefault(client, deque())
            minutes = max(1, self.window // 60)
            if len(spent) >= self.count:
                return (
                    f"Too many uploads: at most {self.count} per {minutes} minutes from one "
                    "visitor. Try again later."
                )
            if sum(n for _, n in spent) + size > self.budget:
                return (
                    f"Too much uploaded: at most {self.budget >> 20} MiB per {minutes} minutes "
                    "from one visitor. Try again later."
                )
            spent.append((now, size))
        return None

    async def __call__(self, scope, receive, send) -> None:
        is_upload = scope["type"] == "http" and scope.get("method") == "POST"
        if not is_upload or not scope.get("path", "").rstrip("/").endswith("/upload"):
            return await self.app(scope, receive, send)
        request = Request(scope)
        length = request.headers.get("content-length", "")
        reason = self.refusal(client_key(request), int(length) if length.isdigit() else None)
        if reason is not None:
            return await _reply(send, 429, reason)
        started = []

        async def sending(message) -> None:
            started.append(True)
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:  # gradio fails on some malformed forms (a file with no name): say so
            if started:
                raise
            log.warning("an upload could not be read", exc_info=True)
            await _reply(send, 400, UNREADABLE)


UNREADABLE = (
    "The upload could not be read: send a multipart form whose parts are named 'files', "
    "each a file with a name."
)


async def _reply(send, status: int, detail: str) -> None:
    """A JSON reply `{"detail": ...}` with `status`, as gradio's own errors are written."""
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def discard(path: str | os.PathLike | None) -> None:
    """Delete an uploaded file its callback has read (it would stay until the cache sweep)."""
    if path:
        Path(path).unlink(missing_ok=True)
