"""The real path: both offline models, KV-cache reuse, batching, mixed tokenizers, few tokens each."""

from __future__ import annotations

import pytest

from bench.variants import NoBatching, NoKvReuse, twin
from rrdemo.backends.base import Finished, GenerationRequest
from rrdemo.backends.hf import TransformersBackend
from rrdemo.backends.tokens import common_prefix
from rrdemo.config import AgentSpec, RunConfig, Sampling
from rrdemo.protocols import run_question
from rrdemo.tasks import get_task

pytestmark = pytest.mark.slow
MODELS = ("smollm2", "gemma3-270m")
GREEDY = Sampling(temperature=0.0)


class _Plain(NoKvReuse, NoBatching):
    """Every optimisation off: each request alone, its whole prompt prefilled."""


def _finish(backend, key, text, n, sampling=GREEDY, seed=0) -> Finished:
    outs = list(backend.generate([GenerationRequest(key, text, n, sampling, seed)]))
    return next(o for o in outs if isinstance(o, Finished))


@pytest.mark.parametrize("name", MODELS)
def test_offline_model_loads_and_generates(real_pool, name):
    backend = real_pool.get(name)
    assert real_pool.get(name) is backend  # one copy per process, however many agents use it
    done = _finish(backend, ("load", name), backend.render_prompt("Name a colour."), 5)
    assert 1 <= done.n_tokens <= 5 and done.text.strip()
    assert done.prefill_tokens == len(backend.encode(backend.render_prompt("Name a colour.")))
    backend.release(("load",))  # the pool is shared by the session: leave no cache behind


@pytest.mark.parametrize("name", MODELS)
def test_kv_reuse_across_a_boundary_that_retokenizes_equals_prefill_from_scratch(real_pool, name):
    backend = twin(real_pool.get(name), TransformersBackend)
    scratch = twin(backend, NoKvReuse)
    key = ("reuse", name)
    first_turn = backend.render_prompt("Is this statement true? Answer briefly.") + "It is def"
    _finish(backend, key, first_turn, 1)
    cached = backend._caches[key].ids
    # Another agent continues the word, so "def" + "initely" re-tokenizes as a different token.
    next_turn = first_turn + "initely true, because"
    ids = backend.encode(next_turn)
    assert common_prefix(cached, ids) < len(cached), (
        "the boundary must re-tokenize for this test to bite"
    )
    reused = _finish(backend, key, next_turn, 8)
    fresh = _finish(scratch, key, next_turn, 8)
    assert reused.text == fresh.text and reused.n_tokens == fresh.n_tokens
    assert fresh.prefill_tokens == len(ids)
    assert reused.prefill_tokens < len(ids) // 2  # only the new suffix (plus the re-tokenized word)


@pytest.mark.parametrize("name", MODELS)
def test_round_robin_with_cache_reuse_and_batching_equals_the_plain_path(real_pool, name):
    backend = real_pool.get(name)
    plain = twin(backend, _Plain)
    task = get_task("custom")
    question = task.question("Which is a fruit? (A) car (B) apple (C) stone", gold="(B)")
    config = RunConfig(
        agents=(AgentSpec(name, True), AgentSpec(name, False), AgentSpec(name, False)),
        k=4,
        max_tokens=12,
        m=2,
        sampling=GREEDY,
    )

    class One:
        def __init__(self, b):
            self.b = b

        def get(self, *_):
            return self.b

    def chunks(b):
        events = run_question(config, question, task, One(b), methods=("RRMaj", "MAJ"))
        # batched rows finish in end-of-sequence order: compare what was written, not when
        return sorted(
            (e.method, e.trajectory, e.turn, e.agent, e.text)
            for e in events
            if e.kind == "chunk_written"
        )

    fast = chunks(twin(backend, TransformersBackend))
    assert fast == chunks(plain)
    assert {c[0] for c in fast} == {"MAJ", "RRMaj"}


def test_a_trajectory_mixing_smollm2_and_gemma_completes(real_pool):
    task = get_task("custom")
    question = task.question("What is 6 times 7?", gold="42")
    config = RunConfig(
        agents=(
            AgentSpec("smollm2", True),
            AgentSpec("gemma3-270m", False),
            AgentSpec("smollm2", False),
        ),
        k=4,
        max_tokens=16,
        m=1,
        order="fixed",
        sampling=Sampling(temperature=0.7, seed=1),
    )
    events = list(run_question(config, question, task, real_pool, methods=("RRMaj",)))
    chunks = [e for e in events if e.kind == "chunk_written"]
    assert [c.model for c in chunks][:3] == ["smollm2", "gemma3-270m", "smollm2"][: len(chunks[:3])]
    answer = next(e for e in events if e.kind == "answer_extracted")
    assert answer.text == "".join(c.text for c in chunks)
    assert sum(c.n_tokens for c in chunks) == answer.n_tokens <= 16
    for c in chunks[:-1]:  # every turn but the last adds exactly K tokens of the writer's tokenizer
        assert c.n_tokens == 4
        assert real_pool.get(c.model).count_tokens(c.text) in range(
            2, 7
        )  # decoded text re-tokenizes close to K
    assert next(e for e in events if e.kind == "decision").method == "RRMaj"


def test_same_config_and_seed_give_the_same_text(real_pool):
    task = get_task("custom")
    question = task.question("Which is bigger? (A) 3 (B) 5", gold="(B)")

    def texts(seed):
        config = RunConfig(
            agents=(AgentSpec("smollm2", True), AgentSpec("smollm2", False)),
            k=4,
            max_tokens=12,
            m=2,
            sampling=Sampling(temperature=1.0, seed=seed),
        )
        events = run_question(config, question, task, real_pool)
        return [e.text for e in events if e.kind == "answer_extracted"]

    first = texts(11)
    assert texts(11) == first
    assert texts(12) != first


def test_finished_runs_leave_no_cache_behind(real_pool):
    backend = real_pool.get("smollm2")
    before = len(backend._caches)
    task = get_task("custom")
    question = task.question("Pick one: (A) yes (B) no", gold="(A)")
    config = RunConfig(agents=(AgentSpec("smollm2"),) * 2, strength="none", k=3, max_tokens=6, m=2)
    stream = run_question(config, question, task, real_pool)
    next(e for e in stream if e.kind == "chunk_written" and e.method == "RRMaj")
    assert len(backend._caches) > before
    stream.close()
    assert len(backend._caches) == before


def test_prefixes_are_shared_within_a_group_only(real_pool):
    """Concurrent runs (two Arena visitors) never start from each other's caches."""
    backend = twin(real_pool.get("smollm2"), TransformersBackend)
    prompt = backend.render_prompt("Name three rivers.")
    first = GenerationRequest(("a",), prompt, 2, GREEDY, 0, group="run-1")
    list(backend.generate([first]))
    same = GenerationRequest(("b",), prompt, 2, GREEDY, 0, group="run-1")
    other = GenerationRequest(("c",), prompt, 2, GREEDY, 0, group="run-2")
    done = {}
    for request in (same, other):
        done[request.group] = next(
            o for o in backend.generate([request]) if isinstance(o, Finished)
        )
    assert done["run-1"].prefill_tokens == 1
    assert done["run-2"].prefill_tokens == len(backend.encode(prompt))
    assert done["run-1"].text == done["run-2"].text
