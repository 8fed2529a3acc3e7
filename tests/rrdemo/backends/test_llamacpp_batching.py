"""Batched prefill on the real llama.cpp model: the rows of a call prefill in one llama_decode
call; the same requests give the same text every time; and how often the batch shape flips a
greedy token (a tolerance, not a promise). The prefill plan itself: test_llamacpp_rows.py."""

from __future__ import annotations

import pytest

from bench.variants import LlamaCppNoPrefixSharing
from rrdemo.backends.base import Finished, GenerationRequest
from rrdemo.backends.llamacpp_rows import PASS_TOKENS
from rrdemo.config import AgentSpec, RunConfig, Sampling
from rrdemo.protocols import run_question
from rrdemo.tasks import get_task
from tests.support.llama import (
    GREEDY,
    OneModel,
    finish,
    llama,
    needs_llama,
    spy_decode,
    twin,
)


# -- the real model -------------------------------------------------------------------------------
@needs_llama
def test_suffixes_of_different_lengths_prefill_in_one_call_and_repeat_exactly(llama_pool):
    base = llama(llama_pool, "smollm2")
    prompts = [base.render_prompt(q) for q in ("Name a colour.", "Name an animal.")]
    more = (
        " Answer in one word.",
        " Answer in one word, then explain why in a short sentence or two.",
    )
    texts = []
    for _ in range(2):
        backend = twin(base)
        for i, prompt in enumerate(prompts):  # each key caches its own prompt
            finish(backend, ("k", i), prompt, 1)
        calls = spy_decode(backend)
        requests = [
            GenerationRequest(("k", i), p + m, 6, GREEDY, 0)
            for i, (p, m) in enumerate(zip(prompts, more, strict=True))
        ]
        done = {o.index: o for o in backend.generate(requests) if isinstance(o, Finished)}
        short, long = done[0].prefill_tokens, done[1].prefill_tokens
        assert 1 < short < long - PASS_TOKENS  # too far apart to pad: two micro-batches
        prefill = [c for c in calls if len({e[2] for e in c}) == 2 and len(c) > 2]
        assert len(prefill) == 1 and len(prefill[0]) == short + long  # both suffixes, one call
        for i, request in enumerate(requests):  # no pad cell stays behind
            assert len(backend._seqs.cached[("k", i)].ids) == len(backend.encode(request.prompt))
        texts.append([done[i].text for i in (0, 1)])
        backend.close()
    assert texts[0] == texts[1]


@needs_llama
@pytest.mark.parametrize("temperature", [0.0, 0.7])
def test_the_same_run_gives_the_same_text_every_time(llama_pool, temperature):
    """MAJ and RRMaj with reuse, sharing and batched prefill: twice on one backend (its cache
    warm from other keys) and once on a fresh one give the same chunks."""
    backend = twin(llama(llama_pool, "smollm2"))
    task = get_task("custom")
    question = task.question("Which is a fruit? (A) car (B) apple (C) stone", gold="(B)")
    agents = (AgentSpec("smollm2", True), AgentSpec("smollm2"), AgentSpec("smollm2"))
    config = RunConfig(
        agents=agents, k=4, max_tokens=12, m=3, sampling=Sampling(temperature, seed=3)
    )

    def chunks(b):
        events = run_question(config, question, task, OneModel(b), methods=("RRMaj", "MAJ"))
        return [
            (e.method, e.trajectory, e.turn, e.agent, e.text)
            for e in events
            if e.kind == "chunk_written"
        ]

    finish(backend, ("other",), backend.render_prompt("Say hello."), 3)  # state from before
    first = chunks(backend)
    assert first == chunks(backend) == chunks(twin(backend))
    assert {c[0] for c in first} == {"RRMaj", "MAJ"}
    backend.close()


# llama.cpp's CPU kernels are not batch-invariant: a row's logits can differ in the last bits with
# the rows and tokens run beside it, and greedy text flips where two tokens nearly tie. Measured
# on SmolLM2 (8 prompts x 24 greedy tokens, one call vs one by one): 0 of 8 texts differ; the
# bound leaves room for another build of llama.cpp.
@needs_llama
def test_how_often_the_batch_shape_flips_a_greedy_token(llama_pool):
    backend = twin(llama(llama_pool, "smollm2"))
    alone = twin(backend, LlamaCppNoPrefixSharing)
    questions = (
        "Name a colour.",
        "What is 7 times 8?",
        "Describe the sea in one sentence.",
        "Which planet is largest?",
        "Give a synonym of happy.",
        "Why is the sky blue?",
        "Count from one to five.",
        "What do bees make? Answer and explain briefly.",
    )
    requests = [
        GenerationRequest(("tol", i), backend.render_prompt(q), 24, GREEDY, 0)
        for i, q in enumerate(questions)
    ]
    together = {o.index: o.text for o in backend.generate(requests) if isinstance(o, Finished)}
    differ = 0
    for i, request in enumerate(requests):
        alone.release()
        differ += finish(alone, request.key, request.prompt, 24).text != together[i]
    assert differ <= 2, f"{differ} of {len(requests)} texts differ between batch shapes"
    for b in (backend, alone):
        b.close()
