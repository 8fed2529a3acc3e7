"""The benchmarks' engine variants on the real offline model: each changes what it says and
nothing else (same greedy text as the engine, different token counts)."""

from __future__ import annotations

import pytest

from bench.variants import (
    BenchLlamaCpp,
    BenchTransformers,
    LlamaCppNoPrefixSharing,
    NoBatching,
    NoKvReuse,
    NoPrefixSharing,
    twin,
)
from rrdemo.backends.base import Finished, GenerationRequest
from rrdemo.backends.hf import TransformersBackend
from rrdemo.backends.pool import ModelPool
from rrdemo.config import Sampling
from tests.support.llama import llama, needs_llama
from tests.support.llama import twin as llama_twin

pytestmark = pytest.mark.slow
GREEDY = Sampling(temperature=0.0)
SHORT = "Answer with one word only: what colour is a ripe banana?"  # the model stops early


def _outs(backend, requests) -> list:
    return [o for o in backend.generate(requests) if isinstance(o, Finished)]


def _one(backend, key, prompt, n) -> Finished:
    return _outs(backend, [GenerationRequest(key, prompt, n, GREEDY, 0)])[0]


@pytest.fixture(scope="module")
def smollm2(real_pool) -> TransformersBackend:
    return real_pool.get("smollm2")


def test_fixed_length_decodes_every_token_asked_for_and_can_be_turned_off(smollm2):
    bench = twin(smollm2, fixed_length=True)
    assert isinstance(bench, BenchTransformers)
    prompt = smollm2.render_prompt(SHORT)
    natural = _one(twin(smollm2, TransformersBackend), ("n",), prompt, 40)
    assert natural.finish_reason == "eos" and natural.n_tokens < 40, "the test needs an early stop"
    fixed = _one(bench, ("f",), prompt, 40)
    assert fixed.n_tokens == 40 and fixed.finish_reason == "length"
    assert fixed.text.startswith(natural.text)
    bench.fixed_length = False
    assert _one(bench, ("g",), prompt, 40).text == natural.text


def test_without_kv_reuse_every_turn_prefills_its_whole_prompt(smollm2):
    engine, plain = twin(smollm2, TransformersBackend), twin(smollm2, NoKvReuse)
    first = smollm2.render_prompt("Name a river.")
    for backend in (engine, plain):
        _one(backend, ("k",), first, 4)
    follow = first + " The Nile is a"
    reused, fresh = _one(engine, ("k",), follow, 4), _one(plain, ("k",), follow, 4)
    assert reused.text == fresh.text
    assert fresh.prefill_tokens == len(smollm2.encode(follow)) > reused.prefill_tokens
    assert not plain._caches


def test_without_prefix_sharing_each_key_prefills_the_shared_prompt_itself(smollm2):
    prompt = smollm2.render_prompt("Describe the sea in one sentence.")
    requests = [GenerationRequest(("s", i), prompt, 3, GREEDY, 0) for i in range(3)]
    shared = _outs(twin(smollm2, TransformersBackend), requests)
    alone = _outs(twin(smollm2, NoPrefixSharing), requests)
    n = len(smollm2.encode(prompt))
    assert sum(o.prefill_tokens for o in alone) == 3 * n
    assert sum(o.prefill_tokens for o in shared) < 2 * n
    assert sorted(o.text for o in alone) == sorted(o.text for o in shared)


def test_without_batching_requests_run_one_after_another(smollm2):
    prompts = [smollm2.render_prompt(q) for q in ("Name a colour.", "Name a fruit.")]
    requests = [GenerationRequest(("b", i), p, 5, GREEDY, 0) for i, p in enumerate(prompts)]
    outs = list(twin(smollm2, NoBatching).generate(requests))
    order = [o.index for o in outs]
    assert order == sorted(order) and set(order) == {0, 1}  # all of request 0 before request 1
    together = {o.index: o.text for o in _outs(twin(smollm2, TransformersBackend), requests)}
    assert {o.index: o.text for o in outs if isinstance(o, Finished)} == together


@needs_llama
def test_llama_cpp_variants_fix_the_length_and_stop_sharing():
    engine = llama(ModelPool(), "smollm2")
    prompt = engine.render_prompt(SHORT)
    natural = _one(engine, ("n",), prompt, 40)
    assert natural.finish_reason == "eos" and natural.n_tokens < 40, "the test needs an early stop"
    fixed = llama_twin(engine, BenchLlamaCpp, fixed_length=True)
    assert _one(fixed, ("f",), prompt, 40).n_tokens == 40
    requests = [GenerationRequest(("s", i), prompt, 3, GREEDY, 0) for i in range(3)]
    alone = llama_twin(engine, LlamaCppNoPrefixSharing)
    n = len(engine.encode(prompt))
    assert sum(o.prefill_tokens for o in _outs(alone, requests)) == 3 * n
    assert sum(o.prefill_tokens for o in _outs(fixed, requests)) < 2 * n
    for backend in (engine, fixed, alone):
        backend.release()
    fixed.close()
    alone.close()
