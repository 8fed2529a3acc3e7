"""How much one client may upload: a count and a byte budget per time window, per client.

Gradio caps each file (`app.MAX_UPLOAD`) but not how many a client sends: one request may hold
dozens of files and requests follow each other without pause. `UploadBudget` is an ASGI
middleware in front of `/gradio_api/upload` and `/gradio_api/process_recording` (a recording
is an upload too): each client (`ui.queue_limits.client_key`: the
signed-in user, else the address) may send `count` upload requests and `megabytes` of request
body per `window` seconds; a request must say its length first, and one over the budget is
refused (HTTP 429) with a message before a byte of it is read, so nothing reaches the disk. An
upload gradio cannot read (a file part without a name) is answered HTTP 400 with what to send,
not a server error. Gradio files an upload under its content's hash, so two visitors sending the
same bytes would be handed one path, and the first callback's `discard` would delete the other's
file: each upload is handed a path of its own (`own_paths`: a hard link in a folder of its own
beside gradio's file). `discard` deletes an uploaded file once the callback that read it is done.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections import deque
from pathlib import Path

from gradio.utils import get_upload_folder
from starlette.requests import Request

from ui.door import reply
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
        is_post = scope["type"] == "http" and scope.get("method") == "POST"
        route = scope.get("path", "").rstrip("/")
        if not is_post or not route.endswith(UPLOAD_ROUTES):
            return await self.app(scope, receive, send)
        request = Request(scope)
        length = request.headers.get("content-length", "")
        reason = self.refusal(client_key(request), int(length) if length.isdigit() else None)
        if reason is not None:
            return await reply(send, 429, reason)
        if not route.endswith("/upload"):
            return await self.app(scope, receive, send)
        answer: list[dict] = []

        async def holding(message) -> None:  # the answer names the paths: held until renamed
            answer.append(message)

        try:
            await self.app(scope, receive, holding)
        except Exception:  # gradio fails on some malformed forms (a file with no name): say so
            if answer:
                raise
            log.warning("an upload could not be read", exc_info=True)
            return await reply(send, 400, UNREADABLE)
        await _send_own_paths(send, answer)


UPLOAD_ROUTES = ("/upload", "/process_recording")


async def _send_own_paths(send, answer: list[dict]) -> None:
    """Gradio's answer to an upload (a JSON list of paths), each path replaced by its own."""
    start = answer[0] if answer else None
    body = b"".join(m.get("body", b"") for m in answer[1:])
    if start is None or start.get("status") != 200:
        for message in answer:
            await send(message)
        return
    try:
        paths = json.loads(body)
        owned = json.dumps([own_path(p) for p in paths]).encode()
    except (ValueError, TypeError, OSError):
        log.warning("an upload's paths could not be made its own", exc_info=True)
        owned = body
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    headers.append((b"content-length", b"%d" % len(owned)))
    await send({**start, "headers": headers})
    await send({"type": "http.response.body", "body": owned})


def own_path(path: str, folder: Path | None = None) -> str:
    """A path of this upload's own for gradio's `path` (`<hash>/<name>` in the upload folder):
    `<hash>/<random>/<name>`, a hard link to the same bytes (a copy where links fail); the
    sweep deletes both with their folders (`ui.scratch.sweep`)."""
    source = Path(path)
    root = os.path.realpath(folder or get_upload_folder())
    if not os.path.realpath(source).startswith(root + os.sep):
        raise ValueError("an upload outside the upload folder")
    home = source.parent / uuid.uuid4().hex
    home.mkdir()
    target = home / source.name
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)
    return str(target)


UNREADABLE = (
    "The upload could not be read: send a multipart form whose parts are named 'files', "
    "each a file with a name."
)


def discard(path: str | os.PathLike | None) -> None:
    """Delete an uploaded file its callback has read (it would stay until the cache sweep)."""
    if path:
        Path(path).unlink(missing_ok=True)
