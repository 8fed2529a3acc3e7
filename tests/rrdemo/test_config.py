"""RunConfig and its parts: per-model defaults, and the one agent-list syntax (`parse_agents`)."""

from __future__ import annotations

import argparse

import pytest

from rrdemo.cli import run as cli_run
from rrdemo.config import (
    INTERACTIVE_DEFAULTS,
    MODEL_DEFAULTS,
    ModelDefaults,
    RunConfig,
    homogeneous_agents,
    parse_agents,
    with_corrupted_seats,
)
from rrdemo.errors import RRError


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


def test_one_agent_list_syntax_lines_roles_stars_and_comments() -> None:
    lines = parse_agents("smollm2, corrupted\n# a comment\ngemma3-270m\n  smollm2 , honest ")
    stars = parse_agents("smollm2*, gemma3-270m, smollm2")
    expected = [("smollm2", True), ("gemma3-270m", False), ("smollm2", False)]
    assert [(a.model, a.corrupted) for a in lines] == expected
    assert [(a.model, a.corrupted) for a in stars] == expected


@pytest.mark.parametrize("role", ["c", "corrupted", "adversarial", "C"])
def test_every_corrupted_role_word_counts_as_corrupted(role: str) -> None:
    """The Arena's rho line once counted only lines containing "corrupt": "smollm2, c" read 0c."""
    (agent,) = parse_agents(f"smollm2, {role}")
    assert agent.corrupted


@pytest.mark.parametrize(
    "text", ["", "# only a comment", "corrupted, smollm2", "smollm2*, honest", ","]
)
def test_bad_agent_lists_are_one_message(text: str) -> None:
    with pytest.raises(RRError):
        parse_agents(text)


def test_corrupted_seats_are_exactly_the_listed_ones() -> None:
    agents = parse_agents("smollm2*, smollm2, smollm2")
    assert [a.corrupted for a in with_corrupted_seats(agents, "1, 2")] == [False, True, True]
    for bad in ("x", "3"):
        with pytest.raises(RRError):
            with_corrupted_seats(agents, bad)


def test_rho_bands_are_exact_for_other_ensemble_sizes() -> None:
    cases = {
        (1, 2): "minority", (2, 1): "majority", (0, 3): "bound", (3, 0): "bound",
        (3, 4): None, (4, 3): None, (5, 2): "majority", (2, 5): "minority",
        (3, 2): "majority", (2, 3): "minority", (1, 1): None,
    }  # fmt: skip
    for (c, t), band in cases.items():
        cfg = RunConfig(agents=homogeneous_agents("smollm2", c + t, c), max_tokens=200)
        assert (cfg.band, cfg.label, cfg.t) == (band, f"{c}c{t}t", t), (c, t)


def test_a_word_outside_its_setting_is_refused_naming_them() -> None:
    with pytest.raises(RRError, match="unknown speaking order 'random'; allowed: fixed, shuffled"):
        RunConfig(agents=homogeneous_agents("smollm2", 2, 1), order="random")
