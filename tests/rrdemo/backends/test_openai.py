"""Served backend against small real HTTP servers on loopback: retries, timeouts, concurrency, keys.

The stub server here speaks just enough of the OpenAI completions API (streamed or not) to let
each fault be produced on demand; the real llama.cpp server is exercised in test_openai_served.py.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rrdemo.backends.base import Delta, Finished, GenerationRequest
from rrdemo.backends.endpoint import Endpoint
from rrdemo.backends.llamacpp_server import free_port
from rrdemo.backends.openai import OpenAIBackend
from rrdemo.backends.pool import ModelPool
from rrdemo.config import RunConfig, Sampling
from rrdemo.errors import RRError
from rrdemo.events import ChunkWritten, Decision, TokenDelta
from rrdemo.protocols import run_question
from rrdemo.seats import homogeneous_agents
from tests.support.fakes import QUESTION, FakeTask


class Stub(ThreadingHTTPServer):
    """Behaviour knobs: `delay` s before answering, `gather` requests held until that many have
    arrived, `fail_first` 500s, `key` required, `models`, `stall` s after a streamed answer's first
    word (counting in `hung_up` the clients that leave). `release()` ends every wait at once."""

    daemon_threads = True

    def __init__(self, **knobs) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.delay = knobs.get("delay", 0.0)
        self.gather = knobs.get("gather", 0)
        self.released = threading.Event()  # set when the test ends: no handler outlives it
        self.arrived = threading.Condition()
        self.gather_until: float | None = None  # the first request's deadline, for all of them
        self.fail_first = knobs.get("fail_first", 0)
        self.fail_from = knobs.get("fail_from")  # this request and all later ones get a 500
        self.key = knobs.get("key")
        self.models = knobs.get("models", ["stub"])
        self.stall = knobs.get("stall", 0.0)
        self.hung_up = 0  # streamed answers whose client closed the connection mid-answer
        self.lock = threading.Lock()
        self.bodies: list[dict] = []
        self.headers_seen: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def release(self) -> None:
        self.released.set()
        with self.arrived:
            self.arrived.notify_all()

    def wait_for_gathering(self) -> None:
        """Hold a request until `gather` requests have arrived (at most 30 s after the first):
        whether the client sends them together is then read from `max_in_flight`, not a clock."""
        with self.arrived:
            self.gather_until = self.gather_until or time.monotonic() + 30
            self.arrived.notify_all()
            self.arrived.wait_for(
                lambda: len(self.bodies) >= self.gather or self.released.is_set(),
                timeout=max(0.0, self.gather_until - time.monotonic()),
            )


class _Handler(BaseHTTPRequestHandler):
    server: Stub

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def _json(self, status: int, data: dict) -> None:
        blob = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(blob)))
        self.end_headers()
        self.wfile.write(blob)

    def do_GET(self) -> None:
        if self.path == "/v1/models":
            self._json(200, {"data": [{"id": m} for m in self.server.models]})
        else:
            self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        srv = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with srv.lock:
            srv.bodies.append(body)
            srv.headers_seen.append(self.headers.get("Authorization", ""))
            attempt = len(srv.bodies)
            srv.in_flight += 1
            srv.max_in_flight = max(srv.max_in_flight, srv.in_flight)
        try:
            srv.wait_for_gathering()
            srv.released.wait(srv.delay)
            if self.path != "/v1/completions":
                return self._json(404, {"error": {"message": f"no route {self.path}"}})
            if srv.key and self.headers.get("Authorization") != f"Bearer {srv.key}":
                return self._json(401, {"error": {"message": "invalid api key"}})
            if attempt <= srv.fail_first or (srv.fail_from and attempt >= srv.fail_from):
                return self._json(500, {"error": {"message": "overloaded"}})
            n = body["max_tokens"]
            words = [f"w{i} " for i in range(n)]
            usage = {"prompt_tokens": 10, "completion_tokens": n, "total_tokens": 10 + n}
            if not body.get("stream"):
                choice = {"text": "".join(words), "index": 0, "finish_reason": "length"}
                return self._json(200, {"choices": [choice], "usage": usage})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            try:
                for i, word in enumerate(words):
                    reason = "length" if i == n - 1 else None
                    chunk = {"choices": [{"text": word, "index": 0, "finish_reason": reason}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    if i == 0 and srv.stall and self._client_left(srv.stall):
                        raise ConnectionResetError("the client closed the connection")
                usage_line = f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n"
                self.wfile.write(usage_line.encode())
                self.wfile.write(b"data: [DONE]\n\n")
            except OSError:  # the client hung up mid-answer
                with srv.lock:
                    srv.hung_up += 1
        finally:
            with srv.lock:
                srv.in_flight -= 1

    def _client_left(self, within: float) -> bool:
        """Whether the client closes the connection within `within` seconds (EOF on a peek)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline and not self.server.released.is_set():
            ready, _, _ = select.select([self.connection], [], [], 0.05)
            if ready and not self.connection.recv(1, socket.MSG_PEEK):
                return True
        return False


@pytest.fixture
def stub():
    servers = []

    def start(**knobs) -> Stub:
        server = Stub(**knobs)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.release()
        server.shutdown()
        server.server_close()


def backend(base_url: str, name: str = "served-agent", **endpoint) -> OpenAIBackend:
    endpoint.setdefault("served_model", "stub")
    endpoint.setdefault("backoff_s", 0.05)
    return OpenAIBackend(name, Endpoint(base_url, **endpoint), prompt_format="completion")


def requests(n: int, max_new_tokens: int = 4) -> list[GenerationRequest]:
    return [
        GenerationRequest(("run", "MAJ", "q", j), f"prompt {j}", max_new_tokens, Sampling(), j)
        for j in range(n)
    ]


def config(n: int = 3, k: int = 2, max_tokens: int = 4) -> RunConfig:
    return RunConfig(
        agents=homogeneous_agents("served-agent", n, 1), k=k, max_tokens=max_tokens, order="fixed"
    )


def run(backend_: OpenAIBackend, methods=("MAJ", "RRMaj"), cfg: RunConfig | None = None):
    pool = ModelPool(loader=_no_local_loads)
    pool.put(backend_)
    return run_question(cfg or config(), QUESTION, FakeTask(), pool, methods=methods)


def _no_local_loads(name, revision=None, **_):
    raise AssertionError(f"a served ensemble must not load local model {name!r}")


@pytest.mark.parametrize("stream", [True, False])
def test_outputs_deltas_and_usage(stub, stream):
    server = stub()
    outs = list(backend(server.base_url, stream=stream).generate(requests(3, 5)))
    finished = sorted((o for o in outs if isinstance(o, Finished)), key=lambda o: o.index)
    assert [f.index for f in finished] == [0, 1, 2]
    for f in finished:
        deltas = "".join(o.text for o in outs if isinstance(o, Delta) and o.index == f.index)
        assert deltas == f.text == "w0 w1 w2 w3 w4 "
        assert (f.n_tokens, f.decode_tokens, f.prefill_tokens, f.finish_reason) == (
            5,
            5,
            10,
            "length",
        )
    sent = sorted(server.bodies, key=lambda b: b["prompt"])
    assert [b["prompt"] for b in sent] == ["prompt 0", "prompt 1", "prompt 2"]
    assert all(b["model"] == "stub" and b["max_tokens"] == 5 for b in sent)
    assert [b["seed"] for b in sent] == [0, 1, 2]


def test_requests_of_one_call_are_in_flight_together(stub):
    server = stub(gather=5)  # a client that sent them one by one would reach 1 at most
    list(backend(server.base_url, concurrency=8).generate(requests(5)))
    assert server.max_in_flight == 5

    limited = stub(gather=2, delay=0.2)  # the first two together, then room for a third to show
    list(backend(limited.base_url, concurrency=2).generate(requests(5)))
    assert limited.max_in_flight == 2


def test_server_errors_are_retried_with_backoff(stub):
    server = stub(fail_first=2)
    outs = list(backend(server.base_url, retries=2).generate(requests(1)))
    assert isinstance(outs[-1], Finished) and outs[-1].n_tokens == 4
    assert len(server.bodies) == 3


def test_persistent_server_errors_name_the_agent_and_turn(stub):
    server = stub(fail_first=100)
    events = run(backend(server.base_url, retries=1), methods=("RRMaj",))
    with pytest.raises(RRError) as info:
        list(events)
    message = str(info.value)
    assert "served-agent" in message and server.base_url in message
    assert "RRMaj trajectory" in message and "agent 0" in message and "its turn 1" in message
    assert "HTTP 500" in message and "2 attempt(s)" in message


def test_wrong_url_fails_fast_naming_the_agent():
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    start = time.perf_counter()
    with pytest.raises(RRError) as info:
        list(run(backend(dead, retries=1, connect_timeout_s=100.0, timeout_s=300.0)))
    # Fast means not waiting out a timeout (100 s to connect): a refused connection ends each
    # attempt at once (well under a second when idle); the bound is wide for a loaded machine.
    assert time.perf_counter() - start < 60
    assert "served-agent" in str(info.value) and dead in str(info.value)
    assert "ConnectError" in str(info.value)


def test_wrong_path_is_not_retried_and_hints_at_v1(stub):
    server = stub()
    wrong = server.base_url.removesuffix("/v1")
    with pytest.raises(RRError, match="ending in /v1"):
        list(backend(wrong, retries=3, check_model=False).generate(requests(1)))
    assert len(server.bodies) == 1  # a 404 is not worth another attempt


def test_unknown_served_model_is_refused_before_generating(stub):
    server = stub(models=["llama-3-8b"])
    with pytest.raises(RRError) as info:
        list(run(backend(server.base_url)))
    assert "'stub'" in str(info.value) and "llama-3-8b" in str(info.value)
    assert server.bodies == []


def test_slow_server_times_out_within_bounded_time(stub):
    server = stub(delay=120.0)
    start = time.perf_counter()
    with pytest.raises(RRError) as info:
        list(run(backend(server.base_url, timeout_s=1.0, retries=1), methods=("MAJ",)))
    elapsed = time.perf_counter() - start
    # two 1 s attempts and a short backoff, never the server's 120 s: the bound is half of that,
    # wide for a loaded machine
    assert elapsed < 60
    assert "timeout" in str(info.value) and "MAJ answer" in str(info.value)
    assert "served-agent" in str(info.value)


def test_closing_the_run_cancels_requests_in_flight(stub):
    server = stub(stall=120.0)  # each answer streams one word, then waits 120 s for the rest
    events = run(backend(server.base_url), methods=("RRMaj",))
    next(e for e in events if isinstance(e, TokenDelta))  # the first turn is being streamed
    assert server.in_flight >= 1
    start = time.perf_counter()
    events.close()
    # closing does not wait for the answer (120 s away): half of that, wide for a loaded machine
    assert time.perf_counter() - start < 60
    deadline = time.monotonic() + 60
    while server.in_flight and time.monotonic() < deadline:
        time.sleep(0.02)
    # Every request the server got was dropped by the client, long before its answer ended.
    assert server.in_flight == 0
    assert server.hung_up == len(server.bodies) >= 1
    assert time.perf_counter() - start < 120  # hung up before the server would have answered


def test_api_key_is_sent_but_never_shown(stub, monkeypatch):
    secret = "sk-test-4242-do-not-log"
    monkeypatch.setenv("RRDEMO_TEST_KEY", secret)
    server = stub(key=secret)
    agent = backend(server.base_url, api_key_env="RRDEMO_TEST_KEY")
    events = list(run(agent))
    assert any(isinstance(e, Decision) for e in events)
    assert set(server.headers_seen) == {f"Bearer {secret}"}
    shown = repr(agent) + json.dumps([e.to_dict() for e in events]) + repr(agent.endpoint)
    assert secret not in shown


def test_missing_or_wrong_api_key(stub, monkeypatch):
    monkeypatch.delenv("RRDEMO_TEST_KEY", raising=False)
    keyless = backend("http://127.0.0.1:1/v1", api_key_env="RRDEMO_TEST_KEY")  # built: no key read
    with pytest.raises(RRError, match="RRDEMO_TEST_KEY is not set"):
        list(keyless.generate(requests(1)))  # a request needs it, before anything is sent
    monkeypatch.setenv("RRDEMO_TEST_KEY", "wrong-key")
    server = stub(key="right-key")
    with pytest.raises(RRError) as info:
        list(backend(server.base_url, api_key_env="RRDEMO_TEST_KEY").generate(requests(1)))
    assert "HTTP 401" in str(info.value) and "api_key_env" in str(info.value)
    assert "wrong-key" not in str(info.value)


def test_protocols_run_unchanged_on_a_served_backend(stub):
    server = stub()
    events = list(run(backend(server.base_url), cfg=config(n=3, k=2, max_tokens=5)))
    chunks = [e for e in events if isinstance(e, ChunkWritten) and e.method == "RRMaj"]
    # 3 trajectories x 3 turns (2 + 2 + 1 tokens); agent order[t % N] writes turn t.
    assert len(chunks) == 9
    for chunk in chunks:
        assert chunk.agent == chunk.turn % 3
        assert chunk.n_tokens == (1 if chunk.turn == 2 else 2)
    # Every RR turn sends the agent's prompt followed by the shared text written so far.
    rr = [b for b in server.bodies if b["max_tokens"] < 5]
    prompts = [b["prompt"] for b in rr]
    assert sum(p.endswith("Answer:") for p in prompts) == 3
    assert sum(p.endswith("Answer:w0 w1 ") for p in prompts) == 3
    assert sum(p.endswith("Answer:w0 w1 w0 w1 ") for p in prompts) == 3


def test_experiment_log_keeps_only_whole_units_when_a_server_fails(stub, tmp_path):
    """A served failure mid-sweep stops the runner with the agent named; the failed unit is not
    recorded as done, and rerunning the same command redoes it from scratch."""
    from rrdemo.runs.log import read_log
    from rrdemo.runs.runner import run_plan
    from rrdemo.runs.spec import Condition, Plan

    cfg = config(n=3, k=2, max_tokens=4)
    questions = tuple(
        type(QUESTION)("fake", f"fake-{i}", QUESTION.text, QUESTION.gold, QUESTION.options)
        for i in range(3)
    )
    condition = Condition(FakeTask(), cfg, questions)
    plan = Plan({"served": True}, (condition,))
    # One unit = 3 MAJ requests + 2 RR turns x 3 trajectories = 9 requests; fail inside unit 2.
    server = stub(fail_from=9 + 5)
    pool = ModelPool(loader=_no_local_loads)
    pool.put(backend(server.base_url, retries=1))
    log = tmp_path / "runs" / "served.jsonl"
    with pytest.raises(RRError, match="served-agent"):
        run_plan(plan, log, pool, progress=False)
    assert read_log(log).done == {(condition.key, "fake-0")}

    server.fail_from = None  # the server is back
    summary = run_plan(plan, log, pool, progress=False)
    assert (summary.units_skipped, summary.units_run) == (1, 2)
    records = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    done = [r["question_id"] for r in records if r["type"] == "done"]
    assert done == ["fake-0", "fake-1", "fake-2"]
    for qid in done:  # every unit holds exactly its M RR trajectories and M MAJ answers
        mine = [r for r in records if r["type"] == "trajectory" and r["question_id"] == qid]
        assert sorted((r["method"], r["trajectory"]) for r in mine) == sorted(
            (m, j) for m in ("MAJ", "RRMaj") for j in range(3)
        )
