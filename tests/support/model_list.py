"""A loopback HTTP server that answers an OpenAI model list (`GET /v1/models`) and nothing else:
enough for the check a sweep makes of its endpoints before it writes anything."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextlib.contextmanager
def model_list_server(models: Sequence[str]) -> Iterator[str]:
    """Serve `models` as the list at {base_url}/models; yields the base URL (…/v1)."""
    body = json.dumps({"object": "list", "data": [{"id": m} for m in models]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            found = self.path.rstrip("/") == "/v1/models"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body if found else b"{}")

        def log_message(self, *args) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
