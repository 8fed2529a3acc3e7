"""Where the front ends start: per-model defaults and the mixed-ensemble rule."""

from __future__ import annotations

import argparse

import pytest

from rrdemo.cli import run as cli_run
from rrdemo.defaults import INTERACTIVE_DEFAULTS, MODEL_DEFAULTS, ModelDefaults


def test_models_without_an_entry_keep_the_front_ends_defaults() -> None:
    assert (
        INTERACTIVE_DEFAULTS.for_models(["smollm2", "gemma3-270m"], "gsm8k") == INTERACTIVE_DEFAULTS
    )


@pytest.mark.parametrize("name", ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
def test_the_qwen_models_reason_step_by_step_with_their_k_and_l_per_task(name: str) -> None:
    entry = MODEL_DEFAULTS[name]
    for task in ("logic3", "gsm8k", "aqua", "math500"):
        got = INTERACTIVE_DEFAULTS.for_models([name], task)
        assert got.prompt_style == "step-by-step"
        assert got.k == entry.k
        assert got.max_tokens == entry.length(task) >= got.k
    assert INTERACTIVE_DEFAULTS.for_models([name.upper()], None).max_tokens == entry.length("*")


def test_mixed_ensembles_take_the_smallest_k_and_the_largest_l(monkeypatch) -> None:
    monkeypatch.setitem(MODEL_DEFAULTS, "a", ModelDefaults(None, k=8, max_tokens=(("*", 300),)))
    monkeypatch.setitem(MODEL_DEFAULTS, "b", ModelDefaults("step-by-step", 32, (("gsm8k", 700),)))
    got = INTERACTIVE_DEFAULTS.for_models(["a", "b", "smollm2"], "gsm8k")
    assert (got.prompt_style, got.k, got.max_tokens) == ("step-by-step", 8, 700)
    got = INTERACTIVE_DEFAULTS.for_models(["a", "b"], "logic3")  # b has no L for logic3
    assert got.max_tokens == 300


def _args(**given) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli_run.register(parser.add_subparsers())
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in given.items()]
    return parser.parse_args(["run", *flags])


def test_rrdemo_run_applies_the_model_defaults_and_a_flag_still_wins() -> None:
    entry = MODEL_DEFAULTS["qwen2.5-coder-1.5b"]
    config, _ = cli_run._config(_args(models="qwen2.5-coder-1.5b", task="GSM8K"))
    assert (config.prompt_style, config.k, config.max_tokens) == (
        "step-by-step",
        entry.k,
        entry.length("gsm8k"),
    )
    config, _ = cli_run._config(
        _args(models="qwen2.5-coder-1.5b", task="gsm8k", k=4, prompt_style="direct")
    )
    assert (config.prompt_style, config.k) == ("direct", 4)
    config, _ = cli_run._config(_args(models="smollm2", task="gsm8k"))
    assert (config.prompt_style, config.k, config.max_tokens) == (
        INTERACTIVE_DEFAULTS.prompt_style,
        INTERACTIVE_DEFAULTS.k,
        INTERACTIVE_DEFAULTS.max_tokens,
    )
