"""Limits at the door, against the real app on a real port: no request body over the limit is
read (a 50 MB JSON body is answered 413 from its headers, a streamed one as soon as its bytes pass
the limit), a recording is an upload (`/process_recording` is in the upload budget), and another
visitor is answered meanwhile. The probe: a 200 MB body grew the server by 726 MB; 40 recordings
of 2 MiB went through in 1.5 s outside the upload budget."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.security.victim import answered_meanwhile
from tests.support.fakes import fake_pool
from tests.support.served import HTTP_TIMEOUT_S, ServedApp, rss_bytes, serve_app
from ui.door import DEFAULT_BODY_MB

LIMIT = DEFAULT_BODY_MB * 2**20
HUGE = 50_000_000  # the check's 50 MB body


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[ServedApp]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RRDEMO_PROXY_HOPS", "1")
        env.setenv("RRDEMO_UPLOADS", "3")  # a small budget: the property, not the volume
        yield from serve_app(fake_pool(), tmp_path_factory.mktemp("door"))


def _connect(url: str) -> socket.socket:
    parts = urlsplit(url)
    sock = socket.create_connection((parts.hostname, parts.port), timeout=HTTP_TIMEOUT_S)
    return sock


def _status(sock: socket.socket) -> tuple[int, bytes]:
    reply = b""
    while b"\r\n\r\n" not in reply:
        data = sock.recv(65536)
        if not data:
            break
        reply += data
    head, _, rest = reply.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
         if line.lower().startswith(b"content-length:")),
        0,
    )  # fmt: skip
    while len(rest) < length:  # the body may come in a later segment than the headers
        data = sock.recv(65536)
        if not data:
            break
        rest += data
    return int(head.split(b" ", 2)[1]), head + rest


def test_a_50_mb_json_body_is_refused_from_its_headers(served: ServedApp, monkeypatch) -> None:
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")
    before = rss_bytes()
    with _connect(served.url) as sock:  # the headers only: not one byte of the body is sent
        sock.sendall(
            b"POST /gradio_api/call/theory HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % HUGE
        )
        started = time.monotonic()
        status, reply = _status(sock)
        took = time.monotonic() - started
    assert status == 413 and b"larger than this app's limit of 4 MiB" in reply
    assert took < 5  # a wide hang guard: the reply does not wait for the 50 MB
    assert rss_bytes() - before < 20 * 2**20
    answered_meanwhile(served.url)


def test_a_streamed_body_is_cut_once_it_passes_the_limit(served: ServedApp) -> None:
    sent = 0
    with _connect(served.url) as sock:
        sock.sendall(
            b"POST /gradio_api/queue/join HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        piece = b'{"data": ["' + b"a" * (2**20 - 11)
        try:
            while sent < 3 * LIMIT:  # never more than the limit and a piece is read
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                sent += len(piece)
                piece = b"a" * 2**20
        except OSError:  # the server answered and closed the connection: nothing more is read
            pass
        status, reply = _status(sock)
    assert status == 413 and b"larger than this app's limit" in reply


def test_bodies_at_the_limit_while_another_visitor_reads(served: ServedApp) -> None:
    """Twenty 50 MB bodies at once (their headers): each is refused, and another visitor's read
    answers meanwhile."""
    codes: list[int] = []

    def attack() -> None:
        with _connect(served.url) as sock:
            sock.sendall(
                b"POST /gradio_api/run/predict HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % HUGE
            )
            codes.append(_status(sock)[0])

    threads = [threading.Thread(target=attack) for _ in range(20)]
    for thread in threads:
        thread.start()
    answered_meanwhile(served.url)
    for thread in threads:
        thread.join(60)
    assert codes == [413] * 20


def test_a_recording_is_an_upload_in_the_budget(served: ServedApp) -> None:
    """`/process_recording` counts against the client's uploads (3 here) before its body is read:
    the fourth is refused with 429, another client is not."""
    import httpx

    def record(address: str) -> httpx.Response:
        files = [("video", ("take.mp4", b"\0" * 2048, "video/mp4"))]
        return httpx.post(
            f"{served.url}gradio_api/process_recording",
            files=files,
            headers={"X-Forwarded-For": address},
            timeout=HTTP_TIMEOUT_S,
        )

    codes = [record("10.60.0.1").status_code for _ in range(4)]
    assert codes[:3] != [429] * 3 and codes[3] == 429
    refused = record("10.60.0.1")
    assert refused.status_code == 429 and "Too many uploads" in refused.json()["detail"]
    assert record("10.60.0.2").status_code != 429
    answered_meanwhile(served.url)
