"""Files the app writes for a visitor, and the sweep that deletes every file left behind.

A file a callback returns (the leaderboard's CSV, a sweep's log) is written by `publish` straight
into gradio's upload folder, the one folder gradio serves files from, under a name made of its
content's hash: the same content is one file however often it is asked for, gradio serves it
without copying it, and its schedule (`app.DELETE_CACHE`) deletes it. That schedule deletes only
files it knows of, leaves their folders, and forgets everything when the process is killed, so
`sweep` deletes, in the same folder, every upload, output and half-written upload (`tmp*`) older
than the age, and the folders they leave empty: once when the server starts (what a killed
process left) and then on the same schedule (`lifespan`). It touches nothing else in the folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gradio.utils import get_upload_folder

log = logging.getLogger(__name__)

_HASHED = re.compile(r"[0-9a-f]{64}")  # gradio's folder per file content (sha256)


def upload_folder() -> Path:
    """Gradio's upload and output folder (`GRADIO_TEMP_DIR`, default `<tmp>/gradio`)."""
    return Path(get_upload_folder())


def publish(data: bytes, name: str, folder: Path | None = None) -> str:
    """`data` as the file `name` in gradio's folder, under its content's hash; returns its path.
    Written under a temporary name and renamed, so a file of that name is always whole."""
    folder = folder if folder is not None else upload_folder()
    home = folder / hashlib.sha256(data).hexdigest()
    home.mkdir(parents=True, exist_ok=True)
    path = home / name
    if path.exists():
        os.utime(path)  # handed out again: its age restarts
        return str(path)
    fd, staging = tempfile.mkstemp(dir=home, prefix=f".{name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return str(path)


def publish_file(source: Path, folder: Path | None = None) -> str:
    """A copy of the file `source` (outside the folders gradio may serve, e.g. the data folder
    on persistent storage), published under its own name."""
    return publish(source.read_bytes(), source.name, folder)


def _old(path: Path, cutoff: float) -> bool:
    try:
        return path.lstat().st_mtime < cutoff
    except FileNotFoundError:
        return False


def sweep(folder: Path, age: float, now: float | None = None) -> int:
    """Delete from gradio's `folder` the files older than `age` seconds in its per-content
    folders, those folders once empty, and half-written uploads (`tmp*`); returns how many
    entries went."""
    cutoff = (now if now is not None else time.time()) - age
    gone = 0
    if not folder.is_dir():
        return gone
    for entry in folder.iterdir():
        if entry.is_file() and entry.name.startswith("tmp") and _old(entry, cutoff):
            entry.unlink(missing_ok=True)
            gone += 1
        elif entry.is_dir() and not entry.is_symlink() and _HASHED.fullmatch(entry.name):
            stale = _old(entry, cutoff)  # read first: deleting inside it makes it look new
            for item in entry.iterdir():
                if _old(item, cutoff):
                    if item.is_dir() and not item.is_symlink():
                        shutil.rmtree(item, ignore_errors=True)
                    else:
                        item.unlink(missing_ok=True)
                    gone += 1
                    stale = True
            if stale:  # a folder just made for a new file is not stale, so it stays
                with contextlib.suppress(OSError):  # not empty: a file in it is still young
                    entry.rmdir()
                    gone += 1
    return gone


def lifespan(frequency: float, age: float, folder: Callable[[], Path] = upload_folder):
    """A server lifespan (`launch(app_kwargs={"lifespan": ...})`) that sweeps `folder()` when
    the server starts, then every `frequency` seconds."""

    def sweep_logged() -> None:
        try:
            gone = sweep(folder(), age)
        except OSError:
            log.exception("the upload folder could not be swept")
            return
        if gone:
            log.info("swept %d old uploads and outputs from %s", gone, folder())

    @contextlib.asynccontextmanager
    async def sweeping(app):
        sweep_logged()  # what a killed process left behind

        async def every() -> None:
            while True:
                await asyncio.sleep(frequency)
                await asyncio.to_thread(sweep_logged)

        task = asyncio.create_task(every())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    return sweeping
