"""RunConfig and its parts: rho bands, word settings."""

from __future__ import annotations

import pytest

from rrdemo.config import RunConfig, logged_setting
from rrdemo.errors import RRError
from rrdemo.seats import homogeneous_agents


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


def test_a_logged_config_reads_its_own_setting_or_the_default_an_older_log_ran() -> None:
    logged = RunConfig(
        agents=homogeneous_agents("smollm2", 2, 1), prompt_style="step-by-step", eos_policy="pass"
    ).to_dict()
    assert logged_setting(logged, "prompt_style") == "step-by-step"
    assert logged_setting(logged, "eos_policy") == "pass"
    older = {k: v for k, v in logged.items() if k not in ("prompt_style", "eos_policy")}
    default = RunConfig(agents=homogeneous_agents("smollm2", 2, 1))
    assert logged_setting(older, "prompt_style") == default.prompt_style
    assert logged_setting(older, "eos_policy") == default.eos_policy
