"""Work whose cost a visitor's text decides, run where the operating system can stop it.

A `WorkerPool` keeps a few worker processes (`python -m rrdemo.worker`), each under
`resource.setrlimit` limits it cannot pass: address space (`RLIMIT_AS`) for its life, CPU
seconds (`RLIMIT_CPU`) per call. The caller waits at most `WorkLimits.wall_seconds` for an answer;
past that the worker is killed (SIGKILL) and the next call starts a fresh one. A call that
breaks a limit raises `Refused`, whose message is one sentence meant to be shown; the caller
gives its work a defined outcome (an answer counted as unparsed, a model refused).

The workers talk over their stdin and stdout: length-prefixed pickles of (module, function,
args) one way, ("ok", value) / ("error", text) the other. A worker's own prints go to stderr. A
worker whose app has gone reads the end of its stdin and exits (a busy one at its CPU limit).
Nothing starts at import: a pool starts its processes on first use.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import pickle
import queue
import resource
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rrdemo.errors import RRError

_HEADER = struct.Struct(">I")


@dataclass(frozen=True)
class WorkLimits:
    """What one worker process may spend."""

    cpu_seconds: int = 5  # CPU time one call may take (RLIMIT_CPU, whole seconds)
    wall_seconds: float = 10.0  # how long the caller waits for one call before killing it
    memory_bytes: int = 2 << 30  # the worker's address space (RLIMIT_AS)
    start_seconds: float = 120.0  # how long a fresh worker may take to import what it preloads
    wait_seconds: float = 20.0  # how long a call waits for a free worker before it is refused
    reply_bytes: int = 4 << 20  # the largest answer a worker may send back


class Refused(RRError):
    """A bounded computation was refused, killed at its deadline, or broke a limit."""


def in_worker() -> bool:
    """Whether this process is a worker (its calls run here, not in another worker)."""
    return os.environ.get("RRDEMO_IN_WORKER") == "1"


class _Process:
    """One worker process, started on first use and replaced after it is killed."""

    def __init__(self, preload: tuple[str, ...], limits: WorkLimits) -> None:
        self.preload, self.limits = preload, limits
        self.proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        settings = json.dumps({"preload": list(self.preload), "limits": asdict(self.limits)})
        root = str(Path(__file__).resolve().parent.parent)  # where this rrdemo is imported from
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "RRDEMO_IN_WORKER": "1", "PYTHONPATH": path}
        proc = subprocess.Popen(
            [sys.executable, "-m", "rrdemo.worker", settings],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        try:
            status, _ = self._read(proc, time.monotonic() + self.limits.start_seconds)
        except Refused:
            _kill(proc)
            raise Refused("the computation could not start in time; try again later") from None
        if status != "ready":
            _kill(proc)
            raise Refused("the computation could not start; try again later")
        return proc

    def call(self, module: str, name: str, args: tuple) -> Any:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        proc = self.proc
        message = pickle.dumps((module, name, args), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            assert proc.stdin is not None
            proc.stdin.write(_HEADER.pack(len(message)) + message)
            proc.stdin.flush()
            status, value = self._read(proc, time.monotonic() + self.limits.wall_seconds)
        except (Refused, OSError):
            self.kill()
            raise
        if status == "ok":
            return value
        raise Refused(str(value))

    def _read(self, proc: subprocess.Popen, deadline: float) -> tuple[str, Any]:
        """One reply from `proc`, or Refused when the deadline passes or the worker dies."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        header = _read_exactly(fd, _HEADER.size, deadline)
        (size,) = _HEADER.unpack(header)
        if size > self.limits.reply_bytes:
            raise Refused("the computation's result was too large to keep, so it was stopped")
        return pickle.loads(_read_exactly(fd, size, deadline))

    def kill(self) -> None:
        if self.proc is not None:
            _kill(self.proc)
            self.proc = None


def _read_exactly(fd: int, size: int, deadline: float) -> bytes:
    chunks, left = [], size
    while left:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise Refused("the computation took too long, so it was stopped")
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:  # the worker died: its CPU or memory limit, or a crash
            raise Refused("the computation went past its CPU or memory limit, so it was stopped")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(Exception):
        proc.wait(timeout=10)
    for stream in (proc.stdin, proc.stdout):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.close()


class WorkerPool:
    """`size` worker processes that import `preload` when they start; `call(fn, *args)` runs a
    module-level function in one of them under `limits`. Safe to call from many threads: each
    call takes a free worker (waiting at most `limits.wait_seconds`)."""

    def __init__(
        self, preload: tuple[str, ...] = (), limits: WorkLimits | None = None, size: int = 1
    ) -> None:
        self.limits = limits or WorkLimits()
        self._idle: queue.Queue[_Process] = queue.Queue()
        self._all = [_Process(preload, self.limits) for _ in range(size)]
        for process in self._all:
            self._idle.put(process)
        self.calls = self.killed = 0  # counts for this pool's tests and benches
        self._count = threading.Lock()

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """`fn(*args)` in a worker; its value, or Refused (one sentence) when it broke a limit,
        raised, or found no free worker in time. In a worker, it runs right here."""
        if in_worker():
            return fn(*args)
        try:
            process = self._idle.get(timeout=self.limits.wait_seconds)
        except queue.Empty:
            raise Refused(
                "the server is busy with other visitors' computations; try again in a moment"
            ) from None
        try:
            with self._count:
                self.calls += 1
            try:
                return process.call(fn.__module__, fn.__qualname__, args)
            except Refused:
                if process.proc is None:  # it was stopped: the next call starts a fresh one
                    with self._count:
                        self.killed += 1
                raise
        finally:
            self._idle.put(process)

    def close(self) -> None:
        """Stop every worker (a later call starts a fresh one)."""
        for process in self._all:
            process.kill()


_POOLS: dict[str, WorkerPool] = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(
    name: str, preload: tuple[str, ...], limits: WorkLimits | None = None
) -> WorkerPool:
    """The process's one pool called `name`, created on first use (`reset` closes them)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(name)
        if pool is None:
            size = max(1, min(2, os.cpu_count() or 1))
            pool = _POOLS[name] = WorkerPool(preload, limits, size)
        return pool


def reset() -> None:
    """Close and forget the shared pools (tests; a later call starts fresh ones)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()


# -- the worker side ---------------------------------------------------------------------------


def _send(out: int, status: str, value: Any) -> None:
    try:
        data = pickle.dumps((status, value), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # an unpicklable value
        data = pickle.dumps(("error", f"the result could not be sent back ({exc})"))
    os.write(out, _HEADER.pack(len(data)) + data)


def _receive(source: int) -> tuple | None:
    header = _read_all(source, _HEADER.size)
    if header is None:
        return None
    data = _read_all(source, _HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


def _read_all(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(settings: str) -> None:
    """Serve calls on stdin/stdout until stdin closes (the worker's side of `WorkerPool`)."""
    config = json.loads(settings)
    limits = WorkLimits(**config["limits"])
    source, out = os.dup(0), os.dup(1)  # the protocol's pipes; library prints go to stderr
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
    for module in config["preload"]:
        importlib.import_module(module)
    _send(out, "ready", None)
    while (message := _receive(source)) is not None:
        module, name, args = message
        soft = math.ceil(_cpu_used()) + limits.cpu_seconds
        resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))
        try:
            fn = getattr(importlib.import_module(module), name)
            _send(out, "ok", fn(*args))
        except MemoryError:
            _send(out, "error", "the computation needed more memory than allowed, so it stopped")
        except RRError as exc:
            _send(out, "error", str(exc))
        except Exception as exc:
            _send(out, "error", f"the computation failed ({type(exc).__name__})")


if __name__ == "__main__":
    main(sys.argv[1])
