"""A sweep's cost before it runs: tokens per unit from N, M*, K, L and the prompts' length."""

from __future__ import annotations

import pytest

from rrdemo.runs.estimate import (
    TokenEstimate,
    estimate_plan,
    local_counters,
    rough_count,
    unit_tokens,
)
from rrdemo.runs.spec import plan_sweep


def _plan(**settings):
    raw = {"tasks": "logic3", "configs": "1c2t", "strengths": "strong", "n": 2}
    return plan_sweep({**raw, **settings})


def test_a_unit_decodes_at_most_two_pools_of_l_and_prefills_its_speakers_prompts() -> None:
    [condition] = _plan(k=8, max_tokens=64).conditions  # N = M* = 3, 8 turns: all 3 speak
    assert unit_tokens(condition, 100) == (3 * 100 + 3 * 3 * (100 + 64), 2 * 3 * 64)
    [short] = _plan(k=8, max_tokens=8).conditions  # one turn: one speaker per trajectory
    assert unit_tokens(short, 100) == (3 * 100 + 3 * 1 * (100 + 8), 2 * 3 * 8)


def test_the_plan_estimate_counts_every_question_with_the_counter_it_is_given() -> None:
    plan = _plan(k=8, max_tokens=64)
    estimate = estimate_plan(plan, lambda model: (lambda text: 100, "a fake"))
    assert estimate == TokenEstimate(2, 2 * (300 + 9 * 164), 2 * 384, ("a fake",))
    assert "at 10 tokens/s about 77 s" in estimate.describe(10)
    assert "give --tokens-per-second" in estimate.describe()


def test_without_a_local_tokenizer_prompts_are_counted_roughly(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("RRDEMO_CACHE_DIR", str(tmp_path))  # no converted copy
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # and nothing in the hub cache
    count, way = local_counters({})("Qwen/Qwen2.5-7B-Instruct")
    assert count is rough_count and "rough" in way
    assert rough_count("x" * 40) == 10


@pytest.mark.slow  # reads a tokenizer out of a GGUF file (tens of seconds on a busy CPU)
def test_an_offline_models_gguf_on_disk_gives_its_own_tokenizer(tmp_path, monkeypatch) -> None:
    from rrdemo.backends.registry import REGISTRY, gguf_on_disk

    if gguf_on_disk(REGISTRY["smollm2"]) is None:
        pytest.skip("the smollm2 package is not installed")
    from transformers import AutoTokenizer

    from rrdemo.backends.counting import token_counter

    monkeypatch.setenv("RRDEMO_CACHE_DIR", str(tmp_path))  # no converted copy, no kept tokenizer
    token_counter.cache_clear()
    text = "Alice, Bob and Carol stand in a row; who is third from the left?"
    count, way = local_counters({})("smollm2")
    assert way == "the smollm2 tokenizer" and count is not rough_count
    # the same count as transformers' own reading of the GGUF file's tokenizer
    gguf = gguf_on_disk(REGISTRY["smollm2"])
    reference = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    assert count(text) == len(reference(text, add_special_tokens=False)["input_ids"]) > 0
    token_counter.cache_clear()
