"""Child processes that die with the test run, also when pytest itself is killed (SIGKILL too).

Every test that starts a server or an app as a subprocess starts it with `start` (or `running`):
- the child asks the kernel for SIGKILL when its parent dies (Linux `prctl(PR_SET_PDEATHSIG)`),
  set by a two-line shim that then `exec`s the real command, so the server keeps its pid and no
  Python runs between fork and exec (`preexec_fn` is unsafe beside the threads a test has);
- the child leads a process group of its own, and `stop` ends that group: whatever it started
  goes with it; a terminal's Ctrl-C, meant for pytest, does not reach it first.

The parent-death signal fires when the thread that started the child ends; tests start children
from pytest's main thread (fixtures and tests run there), which ends only with pytest.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence

# In the child: SIGKILL on the parent's death, exit if the parent is already gone (it may have
# died before the prctl), then become the command. 1 is PR_SET_PDEATHSIG (linux/prctl.h).
_SHIM = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)\n"
    "os.getppid() == int(sys.argv[1]) or os._exit(70)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def guarded(command: Sequence[str]) -> list[str]:
    """`command`, run so that it dies with this process (on Linux; elsewhere unchanged)."""
    if not sys.platform.startswith("linux"):
        return list(command)
    return [sys.executable, "-I", "-S", "-c", _SHIM, str(os.getpid()), *map(str, command)]


def start(command: Sequence[str], **options) -> subprocess.Popen:
    """`subprocess.Popen(command, **options)`, in its own process group and dying with pytest."""
    return subprocess.Popen(guarded(command), start_new_session=True, **options)


def stop(process: subprocess.Popen, timeout_s: float = 30.0) -> None:
    """SIGTERM to the child's process group, then SIGKILL if it outlives `timeout_s`; safe twice."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=timeout_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # what the child started, if it left any
    process.wait()


@contextlib.contextmanager
def running(command: Sequence[str], **options) -> Iterator[subprocess.Popen]:
    """`start` for the `with` block, `stop` after it."""
    process = start(command, **options)
    try:
        yield process
    finally:
        stop(process)
