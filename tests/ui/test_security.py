"""A hostile visitor against the real app on a real port (gradio_client and plain HTTP).

Every attack of docs/security.md is replayed: server paths, uploaded GGUF files and the
leaderboard's own database named as models (Arena, per-agent lines, Experiments), oversized
uploads, a sweep submission without a sweep, HTML in messages, out-of-range numbers, token
guessing, a full model queue. Each must be refused with a plain message that reveals nothing about
the server's files, load nothing, and leave the leaderboard's rows as they were. No model is
loaded here: the refusals come before any load, and the queue is filled with scripted agents.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from leaderboard import hub_sync, service
from leaderboard.db import run_transaction
from rrdemo.backends.pool import ModelPool
from tests.support.fakes import fake_pool
from tests.support.samples import db_checksum
from tests.support.served import (
    HTTP_TIMEOUT_S,
    TOKEN,
    ServedApp,
    app_client,
    rss_bytes,
    serve_app,
)
from ui.state import ARENA_FIELDS, ArenaRequest

TINY = ArenaRequest(model="smollm2", n=3, c=1, k=8, m=0, max_tokens=16, task="logic3")
REFUSED = "is not allowed here"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[ServedApp]:
    """The app as a Space serves it: a public pool that keeps one model."""
    yield from serve_app(ModelPool(public=True, max_models=1), tmp_path_factory.mktemp("app"))


@pytest.fixture(scope="module")
def client(served: ServedApp):
    return app_client(served.url, download_files=False)


def _run_args(request: ArenaRequest) -> list:
    return [getattr(request, name) for name in ARENA_FIELDS]


def _refusal(call) -> str:
    """The message a refused call shows (the test fails when the call is not refused)."""
    from gradio_client.exceptions import AppError, ValidationError

    with pytest.raises((AppError, ValidationError)) as refused:
        call()
    message = str(refused.value)
    assert "Traceback" not in message
    return message


def _upload(url: str, name: str, content: bytes):
    import httpx

    files = [("files", (name, content, "application/octet-stream"))]
    return httpx.post(url + "gradio_api/upload", files=files, timeout=HTTP_TIMEOUT_S)


def _raw_call(url: str, api: str, raw_json: str) -> str:
    """Call `api` with a JSON body as written (clients cannot send a lone surrogate); returns the
    server's streamed reply as text."""
    import httpx

    headers = {"content-type": "application/json"}
    posted = httpx.post(
        f"{url}gradio_api/call/{api}", content=raw_json, headers=headers, timeout=HTTP_TIMEOUT_S
    )
    event = posted.json()["event_id"]
    return httpx.get(f"{url}gradio_api/call/{api}/{event}", timeout=HTTP_TIMEOUT_S).text


def _model_names(served: ServedApp, uploaded: str) -> dict[str, str]:
    """Names a visitor might type, paired with a twin that differs only in whether it exists."""
    db = served.folder / "leaderboard.db"
    return {
        "/etc": "/etc-missing",
        "/etc/passwd": "/etc/passwd-missing",
        uploaded: uploaded + ".missing.gguf",
        str(db): str(db) + "-missing",
        "data/leaderboard.db.gguf": "data/missing.db.gguf",
        "../../../../etc/hostname": "../../../../etc/missing",
        "./": "./missing/",
    }


def test_model_names_reach_no_file_and_reveal_none(client, served: ServedApp) -> None:
    before_rows = run_transaction(served.store.factory, db_checksum)
    before_rss = rss_bytes()
    small = _upload(served.url, "model.gguf", b"GGUF" + b"\0" * 4096)
    assert small.status_code == 200
    uploaded = small.json()[0]
    big = _upload(served.url, "big.gguf", b"GGUF" + b"\0" * (3 * 2**20))  # over MAX_UPLOAD
    assert big.status_code == 413
    tried = refused = 0
    for name, twin in _model_names(served, uploaded).items():
        replies = []
        for typed in (name, twin):
            for request in (
                replace(TINY, model=typed),
                replace(TINY, ensemble="per agent", agents=f"{typed}, honest"),
            ):
                replies.append(
                    _refusal(lambda r=request: client.predict(*_run_args(r), api_name="/run"))
                )
            settings = [["logic3"], typed, "0c1t", ["strong"], 4, 8, 1, 0, ["static"]]
            replies.append(_refusal(lambda s=settings: client.predict(*s, api_name="/sweep")))
        tried += len(replies)
        refused += sum(REFUSED in reply for reply in replies)
        # One text for a name that exists on the server and for its missing twin: no oracle.
        shapes = {reply.replace(twin, "NAME").replace(name, "NAME") for reply in replies}
        assert len(shapes) == 1, shapes
        assert not any(root in shape for shape in shapes for root in ("/tmp", "/etc", "/work"))
    assert refused == tried == 7 * 6
    assert served.pool.loaded() == []  # nothing was opened, parsed or loaded
    assert rss_bytes() - before_rss < 64 * 2**20
    assert run_transaction(served.store.factory, db_checksum) == before_rows
    # An outside reader (the CLI) sees exactly what the app sees: the app's locks were kept.
    outside = service.open_leaderboard(f"sqlite:///{served.folder / 'leaderboard.db'}")
    assert run_transaction(outside, db_checksum) == before_rows


def test_hub_models_over_the_size_cap_are_refused_before_any_download(
    client, served: ServedApp, tmp_path, monkeypatch
) -> None:
    from tests.support.localhub import LocalHub, point_client_at, serve

    huge = "big-org/huge-140b"  # 30 shards of 4.7 GB, listed by the loopback hub's metadata
    with serve(LocalHub()) as hub:
        hub.add_file("model", huge, "config.json", b"{}")
        shards = {f"model-{i:05d}-of-00030.safetensors": 4_700_000_000 for i in range(1, 31)}
        hub.declare("model", huge, shards)
        point_client_at(hub, monkeypatch, tmp_path / "cache")
        for model, size in (("meta-llama/Llama-3.3-70B-Instruct", "141.1"), (huge, "141.0")):
            for request in (
                replace(TINY, model=model),
                replace(TINY, ensemble="per agent", agents=f"{model}, honest"),
            ):
                message = _refusal(lambda r=request: client.predict(*_run_args(r), api_name="/run"))
                assert f"weighs about {size} GB, over this app's limit of 4.0 GB" in message
        assert not [path for _, path, _ in hub.requests if "/resolve/" in path]
        assert [path for _, path, _ in hub.requests if huge in path]  # its metadata was read
    assert served.pool.loaded() == []


def test_uploads_have_a_per_client_budget_and_a_count(served: ServedApp, monkeypatch) -> None:
    import httpx

    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")

    def upload(files: list, headers: dict) -> httpx.Response:
        return httpx.post(
            served.url + "gradio_api/upload", files=files, headers=headers, timeout=HTTP_TIMEOUT_S
        )

    files = [("files", (f"f{i}.json", b"{}" * 100, "application/json")) for i in range(5)]
    headers = {"X-Forwarded-For": "10.5.0.1"}
    codes = [upload(files, headers).status_code for _ in range(21)]
    assert codes[:20] == [200] * 20
    refused = upload(files, headers)
    assert (
        refused.status_code == 429
        and "Too many uploads: at most 20 per 10 minutes" in (refused.json()["detail"])
    )
    # Bytes count too: 1.9 MB files, each under the per-file limit, stop at the 20 MB budget.
    big = [("files", ("big.json", b" " * 1_900_000, "application/json"))]
    other = {"X-Forwarded-For": "10.5.0.2"}
    sent = [upload(big, other).status_code for _ in range(12)]
    assert sent.count(200) == 11 and sent[-1] == 429
    # Someone else still uploads.
    ok = upload(files, {"X-Forwarded-For": "10.5.0.3"})
    assert ok.status_code == 200


def test_messages_are_plain_text_and_numbers_out_of_range_are_named(client) -> None:
    html = '<a href="https://example.com">x</a><img src=x><form>'
    message = _refusal(
        lambda: client.predict(*_run_args(replace(TINY, model=html)), api_name="/run")
    )
    assert "<a" not in message and "&lt;a href" in message  # escaped once: the page shows text
    for seed in (2**70, -1):
        message = _refusal(
            lambda s=seed: client.predict(*_run_args(replace(TINY, seed=s)), api_name="/run")
        )
        assert "seed must be a whole number from 0 to 2147483647" in message
    for number in (2**63, -5):
        reply, queue = client.predict(TOKEN, number, "", api_name="/leaderboard_delete")
        assert "a whole number, 1 or more" in reply and queue["data"] == []


def test_every_refused_sweep_value_is_named(client, served: ServedApp) -> None:
    """NaN, infinity or text in the sweep form's K, L, n or seed, and sizes over the limits: each
    reply is an error with a message (never `"error": null`), and nothing is loaded."""
    base = '[["logic3"], "smollm2", "0c1t", ["strong"], 4, 8, 1, 0, ["static"]]'
    for position, raw, needle in [
        (4, "NaN", "K must be a whole number, got nan"),
        (4, '"sixteen"', "K must be a whole number, got 'sixteen'"),
        (5, "Infinity", "L (max_tokens) must be a whole number, got inf"),
        (6, '"abc"', "n (questions per task) must be a whole number, got 'abc'"),
        (7, "NaN", "seed must be a whole number, got nan"),
        (2, '"999999999c1t"', "is 1000000000; at most 64 is allowed (RRDEMO_MAX_AGENTS)"),
    ]:
        values = base[1:-1].split(", ")
        values[position] = raw
        reply = _raw_call(served.url, "sweep", '{"data": [' + ", ".join(values) + "]}")
        assert "event: error" in reply and '"error": null' not in reply, reply
        assert needle in reply, reply
    assert served.pool.loaded() == []


def test_submissions_need_a_sweep_of_this_session(client, served: ServedApp) -> None:
    before = run_transaction(served.store.factory, db_checksum)
    message = _refusal(lambda: client.predict("mallory", api_name="/submit_sweep"))
    assert "run a sweep first" in message
    assert run_transaction(served.store.factory, db_checksum) == before


def test_pending_is_private_and_token_guessing_is_paused(client, served: ServedApp) -> None:
    served.store.guard = hub_sync.TokenGuard(limit=5, window=60, pause=60)
    reply, queue = client.predict("", None, "", api_name="/leaderboard_pending")
    assert "token" in reply and queue["data"] == []
    lone_surrogate = _raw_call(served.url, "leaderboard_approve", '{"data": ["\\ud800", 1, ""]}')
    assert "token is wrong" in lone_surrogate and "event: complete" in lone_surrogate
    replies = [
        client.predict(guess, 1, "", api_name="/leaderboard_approve")[0]
        for guess in ("a", "' OR 1=1 --", "x" * 10_000, "é", TOKEN)
    ]
    assert all("token is wrong" in r for r in replies[:4])
    assert "Too many wrong admin tokens" in replies[4]  # this client's right one waits too
    # ... but only this client's: the admin, from another address, is not locked out.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RRDEMO_PROXY_HOPS", "1")
        admin = app_client(
            served.url, download_files=False, headers={"X-Forwarded-For": "10.4.0.1"}
        )
        reply, _ = admin.predict(TOKEN, None, "", api_name="/leaderboard_pending")
        assert "submissions wait for approval" in reply
    rows = run_transaction(served.store.factory, lambda s: service.list_submissions(s))
    assert {r.status for r in rows} == {"approved"}  # the paper's tables, untouched


@pytest.fixture(scope="module")
def slow_app(tmp_path_factory) -> Iterator[ServedApp]:
    """The app with scripted agents that take a while: runs wait in the queue."""
    yield from serve_app(fake_pool(delay=5.0), tmp_path_factory.mktemp("slow"))


def _waiting_or_running(app: ServedApp) -> int:
    from tests.support.queue_probe import generation_events

    return len(generation_events(app.demo._queue))


def _until(condition, seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.2)
    return condition()


def test_one_visitor_cannot_fill_the_queue_and_cheap_reads_still_answer(
    slow_app, monkeypatch
) -> None:
    from ui.queue_limits import GENERATION_PER_CLIENT, GENERATION_TOTAL

    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")  # as on a Space: the proxy names each visitor
    request = replace(TINY, model="obey", n=3, c=1, max_tokens=64)
    clients = [
        app_client(
            slow_app.url,
            download_files=False,
            headers={"X-Forwarded-For": f"10.1.0.{i}"},
        )
        for i in range(GENERATION_TOTAL // GENERATION_PER_CLIENT + 1)
    ]
    jobs = []
    try:
        for visitor in clients[:-1]:
            jobs += [visitor.submit(*_run_args(request), api_name="/run") for _ in range(2)]
        assert _until(lambda: _waiting_or_running(slow_app) >= GENERATION_TOTAL)
        assert _waiting_or_running(slow_app) == GENERATION_TOTAL
        # A third run of one visitor, then anyone's run past the total, are refused, saying why.
        extra = clients[0].submit(*_run_args(request), api_name="/run")
        assert "You already have 2 runs" in _refusal(lambda: extra.result(timeout=60))
        late = clients[-1].submit(*_run_args(request), api_name="/run")
        assert "model queue is full" in _refusal(lambda: late.result(timeout=60))
        # Meanwhile every cheap read answers at once.
        _, text = clients[-1].predict(0.03, 0.4, 100, 1000, api_name="/theory")
        assert "66.0%" in text
        ranking, board, _ = clients[-1].predict(
            "all", "all", "all", "all", api_name="/leaderboard_refresh"
        )
        assert board["data"] and os.environ.get("SPACE_ID") is None
    finally:
        for job in reversed(jobs):  # the waiting ones first; the running one stops after a call
            with contextlib.suppress(Exception):
                job.cancel()
        _until(lambda: _waiting_or_running(slow_app) == 0, 120)


def _post_run(url: str, request: ArenaRequest, address: str):
    """A run posted to the raw API (`/gradio_api/call/run`: a new session every time)."""
    import httpx

    headers = {"X-Forwarded-For": address}
    return httpx.post(
        url + "gradio_api/call/run",
        json={"data": _run_args(request)},
        headers=headers,
        timeout=HTTP_TIMEOUT_S,
    )


def _leave(url: str, event_id: str) -> None:
    """Open the run's stream, read its first message, and hang up."""
    import httpx

    with httpx.stream(
        "GET", f"{url}gradio_api/call/run/{event_id}", timeout=HTTP_TIMEOUT_S
    ) as stream:
        for line in stream.iter_lines():
            if line.startswith("event:") and "heartbeat" not in line:
                break


def test_the_raw_api_is_held_to_the_same_per_client_limit_and_leaving_cancels(
    slow_app, monkeypatch
) -> None:
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")
    request = replace(TINY, model="obey", n=3, c=1, max_tokens=64)
    assert _until(lambda: _waiting_or_running(slow_app) == 0, 120)
    first, second = (_post_run(slow_app.url, request, "10.2.0.1") for _ in range(2))
    assert first.status_code == second.status_code == 200
    third = _post_run(slow_app.url, request, "10.2.0.1")
    assert third.status_code == 422 and "You already have 2 runs" in third.text
    assert _post_run(slow_app.url, request, "10.2.0.2").status_code == 200  # someone else
    assert _waiting_or_running(slow_app) == 3
    # The client hangs up on its runs: gradio drops the waiting ones and closes the running one.
    left = [posted.json()["event_id"] for posted in (first, second)]
    for event_id in left:
        _leave(slow_app.url, event_id)
    assert _until(lambda: _waiting_or_running(slow_app) <= 1, 90), _waiting_or_running(slow_app)
    running = slow_app.demo._queue.server_app.iterators  # a run's generator, until it is closed
    assert _until(lambda: not set(left) & set(running), 60)
    again = _post_run(slow_app.url, request, "10.2.0.1")
    assert again.status_code == 200  # its slots are free again
    for posted in (again,):
        _leave(slow_app.url, posted.json()["event_id"])
    assert _until(lambda: _waiting_or_running(slow_app) == 0, 120)


def test_a_run_past_the_time_limit_stops_with_a_message(slow_app, monkeypatch) -> None:
    monkeypatch.setenv("RRDEMO_RUN_SECONDS", "2")  # read when a run starts
    assert _until(lambda: _waiting_or_running(slow_app) == 0, 120)
    client = app_client(slow_app.url, download_files=False)
    request = replace(TINY, model="obey", n=3, c=1, max_tokens=64)
    calls = slow_app.pool.backends["obey"].calls  # every call, 5 s each
    before = len(calls)
    message = _refusal(lambda: client.predict(*_run_args(request), api_name="/run"))
    assert "passed this app's time limit of 2 s and was stopped" in message
    assert _until(lambda: _waiting_or_running(slow_app) == 0, 120)
    # Counted, not timed: the first call (5 s) passes the 2 s limit and the run stops there;
    # the whole run makes many more (RR alone takes turns of K = 8 tokens up to L = 64).
    assert len(calls) - before == 1
