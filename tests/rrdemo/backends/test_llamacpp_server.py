"""Starting, waiting for and stopping a llama.cpp server child process (the real server runs the
protocols in test_openai_served.py); here the waiting and stopping rules, fast."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rrdemo.backends.llamacpp_server import (
    LlamaCppServer,
    free_port,
    launch_llama_cpp_server,
    wait_until_ready,
)
from rrdemo.errors import RRError


class _Models(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_free_port_can_be_bound_on_loopback():
    port = free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))


def test_waiting_ends_as_soon_as_the_model_list_answers():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        start = time.monotonic()
        wait_until_ready(f"http://127.0.0.1:{server.server_address[1]}/v1/", timeout_s=60)
        assert time.monotonic() - start < 10  # the first answer ends it, long before the timeout
    finally:
        server.shutdown()
        server.server_close()


def test_waiting_on_nothing_gives_up_after_the_timeout():
    url = f"http://127.0.0.1:{free_port()}/v1"
    start = time.monotonic()
    with pytest.raises(RRError, match=r"did not answer within 0\.5 s"):
        wait_until_ready(url, timeout_s=0.5)
    assert time.monotonic() - start < 5


def test_a_server_that_dies_is_reported_with_its_exit_code():
    process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
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
        launch_llama_cpp_server(missing, alias="m", log_path=log, ready_timeout_s=60)
    assert log.read_bytes()  # the server's own output is kept for the user
