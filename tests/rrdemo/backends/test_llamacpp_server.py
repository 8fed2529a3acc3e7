"""Starting, waiting for and stopping a llama.cpp server child process (the real server runs the
protocols in test_openai_served.py); here the waiting and stopping rules, fast."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rrdemo.backends import llamacpp_server
from rrdemo.backends.llamacpp_server import (
    LlamaCppServer,
    free_port,
    launch_llama_cpp_server,
    wait_until_ready,
)
from rrdemo.errors import RRError
from tests.support import processes


class _Models(BaseHTTPRequestHandler):
    asked: list[str] = []  # the paths requested, in order (a class list: one server per test)

    def do_GET(self) -> None:
        self.asked.append(self.path)
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def _sleeper() -> subprocess.Popen:
    return processes.start([sys.executable, "-c", "import time; time.sleep(60)"])


class _Clock:
    """`time` for `wait_until_ready`: `monotonic` reads a clock that only `sleep` advances, so
    the wait is counted in polls, whatever the machine's load."""

    def __init__(self) -> None:
        self.now, self.sleeps = 1000.0, 0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.now += seconds


def test_a_free_port_can_be_bound_on_loopback():
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_waiting_ends_as_soon_as_the_model_list_answers(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    monkeypatch.setattr(_Models, "asked", [])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        wait_until_ready(f"http://127.0.0.1:{server.server_address[1]}/v1/", timeout_s=60)
        assert _Models.asked == ["/v1/models"]  # the first answer ends it: one request
    finally:
        server.shutdown()
        server.server_close()


def test_waiting_on_nothing_gives_up_after_the_timeout(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(llamacpp_server, "time", clock)
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(RRError, match=r"did not answer within 0\.5 s"):
        wait_until_ready(url, timeout_s=0.5)
    assert clock.sleeps == 2  # a poll, 0.25 s, a poll, 0.25 s: the deadline, then it gives up


def test_waiting_on_nothing_in_real_time_ends_with_the_message():
    """The same with the real clock: no limit on how long it took (a loaded machine may take
    seconds to make the two requests); pytest's --timeout catches a wait that never ends."""
    with pytest.raises(RRError, match=r"did not answer within 0\.5 s"):
        wait_until_ready(f"http://127.0.0.1:{free_port()}/v1", timeout_s=0.5)


def test_a_server_that_dies_is_reported_with_its_exit_code():
    process = processes.start([sys.executable, "-c", "raise SystemExit(3)"])
    process.wait(timeout=30)
    with pytest.raises(RRError, match="exited with code 3"):
        wait_until_ready(f"http://127.0.0.1:{free_port()}/v1", timeout_s=30, process=process)


def test_stopping_ends_the_child_and_is_safe_twice():
    process = _sleeper()
    with LlamaCppServer(process, "http://127.0.0.1:1/v1", "alias") as server:
        assert server.process.poll() is None
    assert process.poll() is not None  # the `with` block stopped it
    server.stop()  # already stopped: nothing to do


def test_without_llama_cpp_s_server_the_launch_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "llama_cpp.server", None)  # importing it fails
    with pytest.raises(RRError, match="build_llama_cpp_wheel.sh"):
        launch_llama_cpp_server(tmp_path / "model.gguf", alias="m")


@pytest.mark.slow
def test_a_launch_that_fails_is_reported_and_leaves_no_process(tmp_path):
    pytest.importorskip("llama_cpp.server.app", reason="llama-cpp-python's server is not installed")
    missing = tmp_path / "missing.gguf"
    log = tmp_path / "server.log"
    with pytest.raises(RRError, match="exited with code"):
        launch_llama_cpp_server(
            missing, alias="m", log_path=log, ready_timeout_s=60, popen=processes.start
        )
    assert log.read_bytes()  # the server's own output is kept for the user
