"""Turn policies on the real offline model (SmolLM2), few tokens: transformers and llama.cpp."""

from __future__ import annotations

import pytest

from rrdemo.backends.base import Finished, GenerationRequest
from rrdemo.backends.llamacpp_native import available
from rrdemo.config import RunConfig, Sampling
from rrdemo.protocols import run_question
from rrdemo.seats import homogeneous_agents
from rrdemo.tasks import get_task, load_questions
from rrdemo.turns import TurnPolicy, is_sentence_end

pytestmark = pytest.mark.slow
GREEDY = Sampling(temperature=0.0)
PROMPT = "Write three short sentences about cats."


def _backend(pool, engine: str):
    if engine == "llamacpp" and available() is not None:
        pytest.skip(f"llama-cpp-python is not importable ({available()})")
    return pool.get("smollm2", None, engine)


def _one(backend, key, prompt: str, k: int, turn: TurnPolicy | None) -> Finished:
    request = GenerationRequest(key, prompt, k, GREEDY, 0, room=k, turn=turn)
    return [o for o in backend.generate([request]) if isinstance(o, Finished)][0]


@pytest.mark.parametrize("engine", ["transformers", "llamacpp"])
def test_a_sentence_turn_ends_at_a_sentence_end_after_k_min(real_pool, engine):
    backend = _backend(real_pool, engine)
    prompt = backend.render_prompt(PROMPT)
    fixed = _one(backend, ("fixed", engine), prompt, 40, None)
    turn = _one(backend, ("sentence", engine), prompt, 40, TurnPolicy("sentence", 3, 40))
    assert fixed.n_tokens == 40 or fixed.finish_reason == "eos"
    assert 3 <= turn.n_tokens < fixed.n_tokens  # ended early ...
    assert is_sentence_end(turn.text)  # ... at a sentence end
    assert fixed.text.startswith(turn.text)  # greedy: the same words up to there


@pytest.mark.parametrize("engine", ["transformers", "llamacpp"])
def test_uncertainty_turns_differ_from_fixed_and_the_cache_stays_right(real_pool, engine):
    backend = _backend(real_pool, engine)
    prompt = backend.render_prompt(PROMPT)
    policy = TurnPolicy("uncertainty", k_min=2, k_max=24, entropy_threshold=1.0)
    key = ("uncertain", engine)
    first = _one(backend, key, prompt, 24, policy)
    assert 2 <= first.n_tokens < 24 and first.finish_reason == "length"
    if engine != "transformers":
        return
    # The next turn of the same key reads its cache (all tokens fed, the uncertain one not
    # written): it must continue exactly as a backend without caches does.
    from bench.variants import NoKvReuse, twin

    follow = prompt + first.text
    cached = _one(backend, key, follow, 6, None)
    plain = twin(backend, NoKvReuse)
    fresh = _one(plain, ("fresh", engine), follow, 6, None)
    assert cached.text == fresh.text and cached.prefill_tokens < fresh.prefill_tokens


def test_an_uncertainty_run_differs_in_turn_lengths_from_fixed(real_pool):
    task = get_task("demo")
    question = load_questions("demo")[0]
    config = RunConfig(
        agents=homogeneous_agents("smollm2", 2, 1),
        k=8,
        max_tokens=32,
        m=1,
        order="fixed",
        sampling=GREEDY,
        eos_policy="pass",
    )

    def lengths(cfg):
        events = run_question(cfg, question, task, real_pool, methods=("RRMaj",))
        chunks = [e for e in events if e.kind == "chunk_written"]
        return [c.n_tokens for c in chunks], sum(c.n_tokens for c in chunks)

    fixed, fixed_total = lengths(config)
    adaptive, total = lengths(config.with_(turn_policy="uncertainty", entropy_threshold=1.0))
    assert fixed != adaptive
    assert all(n <= 8 for n in adaptive) and total <= 32
    assert any(0 < n < 8 for n in adaptive[:-1])  # some turn handed over early
