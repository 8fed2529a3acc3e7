"""The real app served on a free loopback port for a test module, with its own data and DB."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from leaderboard import hub_sync

TOKEN = "sesame"  # the admin token of a served app
# HTTP timeout of test clients: httpx's and gradio_client's default of 5 s is shorter than what a
# request to an app in this process can take on a loaded 2-core machine.
HTTP_TIMEOUT_S = 60.0


def app_client(url: str, **options):
    """A quiet `gradio_client.Client` with the tests' HTTP timeout (its streams get gradio's
    heartbeat every 15 s, well within it); `options` go to the Client."""
    from gradio_client import Client

    return Client(url, verbose=False, httpx_kwargs={"timeout": HTTP_TIMEOUT_S}, **options)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_bytes() -> int:
    """This process's resident memory (the served app runs in it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


@dataclass
class ServedApp:
    url: str
    pool: object
    store: hub_sync.Store
    folder: Path  # holds leaderboard.db and data/
    demo: object


def serve_app(pool, folder: Path, project_runs: Path | None = None) -> Iterator[ServedApp]:
    """`app.build_demo(pool)` launched as `python app.py` launches it (`app.serve`); its board
    seeds the committed sweeps of `project_runs` when given (the paper's tables only else)."""
    import app

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RRDEMO_DATA_DIR", str(folder / "data"))
        mp.setenv("LEADERBOARD_DB_URL", f"sqlite:///{folder / 'leaderboard.db'}")
        # the paper's tables only, as the suite's own readers of this database seed it
        # (tests/conftest.py): a module's app is built before its tests set their paths, and a
        # reader seeding from other committed sweeps would replace the app's "rrdemo" rows
        mp.setenv("LEADERBOARD_PROJECT_RUNS", str(project_runs or folder / "no-project-runs"))
        mp.setenv("LEADERBOARD_ADMIN_TOKEN", TOKEN)
        store = hub_sync.open_store()
        demo = app.build_demo(pool=pool, leaderboard=store)
        port = free_port()
        app.serve(demo, "127.0.0.1", port, prevent_thread_lock=True, quiet=True)
        try:
            yield ServedApp(f"http://127.0.0.1:{port}/", pool, store, folder, demo)
        finally:
            demo.close()
            # gradio keeps a closed app (and through it the pool) alive: its models are let go
            # here, or each served app of the run would hold its own copies to the end.
            release = getattr(pool, "release", None)
            if release is not None:
                release()


@contextlib.contextmanager
def served_app(pool, folder: Path) -> Iterator[str]:
    """`serve_app` as a context manager that yields only the URL."""
    yield from (app.url for app in serve_app(pool, folder))
