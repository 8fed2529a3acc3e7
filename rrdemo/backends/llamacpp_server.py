"""A real llama.cpp server on this machine (tests, benchmark, the tested recipe in docs/serving.md).

`launch_llama_cpp_server` starts llama-cpp-python's OpenAI-compatible server as a child process
on loopback and waits until it answers; agents reach it through `rrdemo.backends.openai`.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from rrdemo.errors import RRError


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_ready(base_url: str, timeout_s: float = 120.0, process=None) -> None:
    """Poll `{base_url}/models` until the server answers; RRError if it dies or takes too long."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RRError(f"the server at {base_url} exited with code {process.returncode}")
        try:
            left = max(0.05, min(2.0, deadline - time.monotonic()))
            if httpx.get(f"{base_url.rstrip('/')}/models", timeout=left).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise RRError(f"the server at {base_url} did not answer within {timeout_s:g} s")


@dataclass
class LlamaCppServer:
    """A running `python -m llama_cpp.server` child process; `stop()` (or `with`) ends it."""

    process: subprocess.Popen
    base_url: str
    alias: str
    log_path: Path | None = None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def __enter__(self) -> LlamaCppServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def launch_llama_cpp_server(
    model_path: str | Path,
    *,
    alias: str,
    port: int | None = None,
    n_ctx: int = 2048,
    n_threads: int = 1,
    log_path: Path | None = None,
    ready_timeout_s: float = 120.0,
    extra_args: Sequence[str] = (),
    popen: Callable[..., subprocess.Popen] = subprocess.Popen,
) -> LlamaCppServer:
    """Start llama-cpp-python's OpenAI-compatible server on loopback and wait until it answers.

    `--interrupt_requests False` matters: by default that server cuts a streaming answer short
    whenever another request arrives, and rrdemo sends many requests at once. `popen` starts the
    process (`subprocess.Popen`'s signature): the tests pass one that ties it to their run.
    """
    try:
        import llama_cpp.server  # noqa: F401 - only to fail early with a clear message
    except ImportError as exc:
        raise RRError(
            f"llama-cpp-python's server is not installed ({exc}); run scripts/build_llama_cpp_wheel.sh"
        ) from None
    port = port or free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path), "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", str(n_threads),
        "--interrupt_requests", "False",
        *extra_args,
    ]  # fmt: skip
    sink = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
    try:
        process = popen(command, stdout=sink, stderr=subprocess.STDOUT)
    finally:
        if log_path:
            sink.close()
    server = LlamaCppServer(process, f"http://127.0.0.1:{port}/v1", alias, log_path)
    try:
        wait_until_ready(server.base_url, ready_timeout_s, process)
    except BaseException:
        server.stop()
        raise
    return server
