"""A server a test starts dies with the test run, even when pytest is killed with SIGKILL
(tests/support/processes.py); without the guard the same server outlives it."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.support import processes

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's"
)

# A test run that starts a server (Python's own HTTP server) the way `start` is asked to, writes
# the server's pid, then waits to be killed.
_INNER = """
import subprocess, sys, time
from pathlib import Path
from tests.support import processes

def test_serves_until_killed():
    command = [sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1"]
    server = processes.start(command) if {guarded} else subprocess.Popen(command)
    Path({pid_file!r}).write_text(str(server.pid))
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    """A process that runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _until(condition, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return condition()


def _kill_a_pytest_that_started_a_server(tmp_path: Path, guarded: bool) -> int:
    """Run the inner test in its own pytest, SIGKILL that pytest once the server runs; returns
    the server's pid."""
    pid_file = tmp_path / "server.pid"
    test_file = tmp_path / "test_inner.py"
    test_file.write_text(_INNER.format(guarded=guarded, pid_file=str(pid_file)))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    inner = processes.start(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)],
        cwd=tmp_path,
        env=env,
    )
    try:
        # Python's start-up on a loaded machine: a wide wait, ended by the pid file.
        assert _until(lambda: pid_file.exists() and pid_file.read_text(), 120), "no server"
        server = int(pid_file.read_text())
        assert _alive(server)
    finally:
        # SIGKILL to pytest alone, as the kernel's out-of-memory killer sends it (`stop` would
        # end the whole group, the unguarded server included).
        os.kill(inner.pid, signal.SIGKILL)
        inner.wait(timeout=60)
    return server


def test_a_server_dies_when_the_pytest_that_started_it_is_killed(tmp_path: Path) -> None:
    server = _kill_a_pytest_that_started_a_server(tmp_path, guarded=True)
    # The kernel sends SIGKILL at the parent's death; the wait only covers a loaded machine.
    assert _until(lambda: not _alive(server), 60), f"server {server} outlived its pytest"


def test_without_the_guard_the_server_outlives_its_pytest(tmp_path: Path) -> None:
    """What the guard prevents (this test cleans up the server it leaves)."""
    server = _kill_a_pytest_that_started_a_server(tmp_path, guarded=False)
    try:
        time.sleep(1)
        assert _alive(server)
    finally:
        if _alive(server):
            os.kill(server, signal.SIGKILL)


def test_stopping_ends_the_server_and_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    spawn = (
        "import subprocess, sys, time; "
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
        f"open({str(pid_file)!r}, 'w').write(str(child.pid)); time.sleep(600)"
    )
    with processes.running([sys.executable, "-c", spawn]) as parent:
        assert _until(lambda: pid_file.exists() and pid_file.read_text(), 120)
        grandchild = int(pid_file.read_text())
        assert _alive(parent.pid) and _alive(grandchild)
    assert parent.returncode == -signal.SIGTERM
    assert _until(lambda: not _alive(grandchild), 60)
    processes.stop(parent)  # already stopped: nothing to do
