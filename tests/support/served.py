"""The real app served on a free port, with its own data dir and database, for one test module."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served_app(pool, folder: Path) -> Iterator[str]:
    """build_demo(pool) launched on 127.0.0.1; yields its URL and closes it afterwards."""
    import app

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RRDEMO_DATA_DIR", str(folder / "data"))
        mp.setenv("LEADERBOARD_DB_URL", f"sqlite:///{folder / 'leaderboard.db'}")
        demo = app.build_demo(pool=pool)
        port = free_port()
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
        try:
            yield f"http://127.0.0.1:{port}/"
        finally:
            demo.close()
