"""The estimator of gamma_H and alpha (rrdemo.report.theory_fit) on synthetic trajectories."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rrdemo.meter import potential
from rrdemo.report.theory_fit import fit, fit_records, meter_steps, theory_fit_md
from rrdemo.theory import rho_max

COND = {"key": "logic3:abc", "ensemble": "qwen", "task": "logic3", "k": 16}


def z_of(v: float) -> float:
    """The inverse of V = ln(1 + exp(-z))."""
    return -math.log(math.expm1(v))


def synthetic(gamma_h: float, alpha: float, *, trajectories: int = 40, noise: float = 0.0, seed=0):
    """Metered RR records whose V shrinks by (1 - gamma_H) per honest token and grows by
    (1 + alpha) per corrupted token (the paper's model), with optional noise on ln V."""
    rng = np.random.default_rng(seed)
    pairs = []
    for j in range(trajectories):
        v, n_tokens = float(rng.uniform(0.3, 1.5)), 0
        readings = [{"turn": -1, "agent": None, "corrupted": None, "n_tokens": 0, "readers": {}}]
        readings[0]["readers"]["honest"] = {"z": z_of(v)}
        for turn in range(8):
            corrupted = bool(rng.random() < 0.6)
            tokens = int(rng.integers(8, 17))
            v *= ((1 + alpha) if corrupted else (1 - gamma_h)) ** tokens
            seen = v * math.exp(rng.normal(0, noise)) if noise else v
            n_tokens += tokens
            readings.append(
                {
                    "turn": turn,
                    "agent": turn % 5,
                    "corrupted": corrupted,
                    "n_tokens": n_tokens,
                    "readers": {"honest": {"z": z_of(seen)}},
                }
            )
        record = {"question_id": f"q{j}", "method": "RRMaj", "trajectory": j, "meter": readings}
        pairs.append((COND, record))
    return pairs


def test_known_gamma_h_and_alpha_are_recovered_exactly_without_noise():
    [f] = fit(meter_steps(synthetic(0.03, 0.004)), boot=50)
    assert f.gamma_h().value == pytest.approx(0.03, rel=1e-6)
    assert f.alpha().value == pytest.approx(0.004, rel=1e-6)
    assert f.rho_max() == pytest.approx(rho_max(0.03, 0.004, 16))
    honest, corrupted = f.roles["honest"], f.roles["corrupted"]
    assert honest.dz.value > 0 > corrupted.dz.value  # honest tokens raise z, corrupted lower it
    assert honest.dv.value < 0 < corrupted.dv.value


def test_with_noise_the_bootstrap_interval_covers_the_truth():
    [f] = fit(meter_steps(synthetic(0.02, 0.01, trajectories=60, noise=0.1, seed=3)), boot=300)
    gamma, alpha = f.gamma_h(), f.alpha()
    assert gamma.lo <= 0.02 <= gamma.hi and gamma.hi - gamma.lo < 0.01
    assert alpha.lo <= 0.01 <= alpha.hi


def test_steps_follow_the_readings_and_skip_turns_without_tokens():
    pairs = synthetic(0.03, 0.004, trajectories=1)
    readings = pairs[0][1]["meter"]
    readings.insert(2, {**readings[1], "turn": 0.5})  # a pass: no new token
    steps = meter_steps(pairs)
    assert len(steps) == 8
    first = steps[0]
    v0 = potential(readings[0]["readers"]["honest"]["z"])
    v1 = potential(readings[1]["readers"]["honest"]["z"])
    assert first.dv == pytest.approx(v1 - v0) and first.tokens == readings[1]["n_tokens"]


def test_the_report_files_name_the_parameters_and_the_bound():
    fits = fit(meter_steps(synthetic(0.03, 0.004)), boot=50)
    text = theory_fit_md(fits, [])
    assert "gamma_H" in text and "+0.03000" in text and f"{rho_max(0.03, 0.004, 16):.1%}" in text
    [record] = fit_records(fits, [])
    assert record["gamma_h"][0] == pytest.approx(0.03) and record["k"] == 16
    assert "No metered runs" in theory_fit_md([], [])
