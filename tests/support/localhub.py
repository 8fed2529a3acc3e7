"""A Hugging Face hub on loopback for tests: the endpoints `hf_hub_download` and
`from_pretrained` use, answering from files held in memory (no network).

`HEAD|GET /{repo}/resolve/{rev}/{file}` (models) and `/datasets/{repo}/resolve/{rev}/{file}` send
the file with the headers the client reads (X-Repo-Commit, ETag, Content-Length, X-Linked-Size);
an unknown file is a 404 with `X-Error-Code: EntryNotFound`, as on the hub. `/api/{models|datasets}
/{repo}/revision/{rev}` describes a repo (its files with their sizes) and `/api/.../tree/...` lists
it; `declare` lists files by size alone (a repo too large to hold) and sets the repo's flags;
`grow` commits a file on top of a repo's head (a revision naming the old commit still reads the
old files). Every request is
recorded in `requests` so a test can check what was really fetched.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class LocalHub:
    """Files per (repo_type, repo_id): {path in repo: bytes}."""

    repos: dict[tuple[str, str], dict[str, bytes]] = field(default_factory=dict)
    requests: list[tuple[str, str, int]] = field(default_factory=list)  # (method, path, status)
    url: str = ""
    # Files listed with a size but no content (a 140 GB repo's shards): a download answers 404.
    declared: dict[tuple[str, str], dict[str, int | None]] = field(default_factory=dict)
    flags: dict[tuple[str, str], dict] = field(default_factory=dict)  # {"gated": "manual"}, ...
    heads: dict[tuple[str, str], str] = field(default_factory=dict)  # repo -> head commit
    # repo -> {earlier commit: its files}: a revision naming one of them reads those files
    history: dict[tuple[str, str], dict[str, dict[str, bytes]]] = field(default_factory=dict)

    def head(self, repo_type: str, repo_id: str) -> str:
        return self.heads.get((repo_type, repo_id), COMMIT)

    def grow(self, repo_type: str, repo_id: str, name: str, data: bytes) -> str:
        """Commit file `name` to `repo_id` on top of its head; returns the new head."""
        key = (repo_type, repo_id)
        old = self.head(*key)
        self.history.setdefault(key, {})[old] = dict(self.repos[key])
        self.heads[key] = hashlib.sha1(f"{old}/{name}".encode()).hexdigest()
        self.repos[key][name] = data
        return self.heads[key]

    def files(self, repo_type: str, repo_id: str, revision: str) -> tuple[str, dict[str, bytes]]:
        """(commit, files) of `repo_id` at `revision`: an earlier commit, else the head."""
        key = (repo_type, repo_id)
        earlier = self.history.get(key, {})
        if revision in earlier:
            return revision, earlier[revision]
        return self.head(*key), self.repos[key]

    def declare(self, repo_type: str, repo_id: str, sizes: dict[str, int | None], **flags) -> None:
        """List files of `repo_id` by size only, with repo flags (private, gated, disabled)."""
        self.repos.setdefault((repo_type, repo_id), {})
        self.declared.setdefault((repo_type, repo_id), {}).update(sizes)
        self.flags.setdefault((repo_type, repo_id), {}).update(flags)

    def add_folder(self, repo_type: str, repo_id: str, folder: Path) -> None:
        files = self.repos.setdefault((repo_type, repo_id), {})
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                files[path.relative_to(folder).as_posix()] = path.read_bytes()

    def add_file(self, repo_type: str, repo_id: str, name: str, data: bytes) -> None:
        self.repos.setdefault((repo_type, repo_id), {})[name] = data

    def served(self, status: int = 200) -> list[str]:
        """Paths of the file downloads (GET .../resolve/...) answered with `status`."""
        return [p for m, p, s in self.requests if m == "GET" and "/resolve/" in p and s == status]


def _parse(path: str) -> tuple[str, str, list[str]]:
    """URL path -> (repo_type, repo_id, rest of the parts), both for /api/... and /resolve/."""
    parts = [unquote(p) for p in urlsplit(path).path.strip("/").split("/")]
    api = parts[:1] == ["api"]
    if api:
        parts = parts[1:]
        repo_type = {"models": "model", "datasets": "dataset", "spaces": "space"}.get(parts[0], "")
        parts = parts[1:]
    elif parts[:1] in (["datasets"], ["spaces"]):
        repo_type, parts = parts[0][:-1], parts[1:]
    else:
        repo_type = "model"
    return repo_type, "/".join(parts[:2]), parts[2:]


def _handler(hub: LocalHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass  # quiet test output

        def _send(self, status: int, body: bytes, headers: dict[str, str], head: bool) -> None:
            hub.requests.append((self.command, self.path, status))
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _missing(self, head: bool, code: str = "EntryNotFound") -> None:
            body = json.dumps({"error": f"{code}: {self.path}"}).encode()
            self._send(404, body, {"X-Error-Code": code, "X-Error-Message": code}, head)

        def _answer(self, head: bool) -> None:
            repo_type, repo_id, rest = _parse(self.path)
            if (repo_type, repo_id) not in hub.repos:
                return self._missing(head, "RepoNotFound")
            commit, files = hub.files(repo_type, repo_id, rest[1] if len(rest) > 1 else "main")
            if self.path.startswith("/api/"):
                if rest[:1] == ["revision"] or not rest:
                    sizes = {name: len(data) for name, data in files.items()}
                    sizes.update(hub.declared.get((repo_type, repo_id), {}))
                    info = {
                        "id": repo_id,
                        "sha": commit,
                        "siblings": [
                            {"rfilename": name, "size": size}
                            for name, size in sorted(sizes.items())
                        ],
                        "private": False,
                        "gated": False,
                        "disabled": False,
                        "tags": [],
                        **hub.flags.get((repo_type, repo_id), {}),
                    }
                    return self._send(200, json.dumps(info).encode(), _JSON, head)
                if rest[:1] == ["tree"]:
                    prefix = "/".join(rest[2:]).strip("/")
                    listed = [
                        {"type": "file", "path": name, "size": len(data), "oid": _etag(data)}
                        for name, data in sorted(files.items())
                        if not prefix or name.startswith(prefix + "/")
                    ]
                    if prefix and not listed:
                        return self._missing(head)
                    return self._send(200, json.dumps(listed).encode(), _JSON, head)
                return self._missing(head)
            if rest[:1] != ["resolve"] or len(rest) < 3:
                return self._missing(head)
            name = "/".join(rest[2:])
            if name not in files:
                return self._missing(head)
            data = files[name]
            headers = {
                "X-Repo-Commit": commit,
                "ETag": f'"{_etag(data)}"',
                "X-Linked-Size": str(len(data)),
                "Content-Type": "application/octet-stream",
                "Accept-Ranges": "bytes",
            }
            self._send(200, data, headers, head)

        def do_HEAD(self) -> None:  # http.server's naming
            self._answer(head=True)

        def do_GET(self) -> None:
            self._answer(head=False)

    return Handler


_JSON = {"Content-Type": "application/json"}


def _etag(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@contextmanager
def serve(hub: LocalHub) -> Iterator[LocalHub]:
    """Serve `hub` on 127.0.0.1 (a free port) in a thread; `hub.url` is its endpoint."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    server.daemon_threads = True
    hub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()


def parquet_bytes(rows: list[dict]) -> bytes:
    """Rows -> one parquet file, as the hub's `refs/convert/parquet` branch serves them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    return buffer.getvalue()


def point_client_at(hub: LocalHub, monkeypatch, cache: Path) -> None:
    """Point this process's huggingface_hub at `hub` (online, with an empty cache in `cache`)."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", hub.url)
    monkeypatch.setattr(
        constants,
        "HUGGINGFACE_CO_URL_TEMPLATE",
        hub.url + "/{repo_id}/resolve/{revision}/{filename}",
    )
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
