"""The paired estimate of one run and of runs pooled, and the power beside a verdict, on
constructed decisions whose counts are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rrdemo.report.pooled import (
    PairCounts,
    RunDecisions,
    mcnemar_exact,
    paired_counts_estimate,
    paired_estimate,
    pool_runs,
    rescue_power,
    smallest_rescue,
    verdict,
)


def _decisions(both: int, maj_only: int, rr_only: int, neither: int) -> tuple[list, list]:
    maj = [True] * both + [True] * maj_only + [False] * rr_only + [False] * neither
    rr = [True] * both + [False] * maj_only + [True] * rr_only + [False] * neither
    return maj, rr


def _exact_quantile(cell: PairCounts, q: float) -> float:
    """The q-quantile of (C* - B*) / n over every bootstrap resample (the multinomial enumerated)."""
    n = cell.questions
    pb, pc = cell.maj_only / n, cell.rrmaj_only / n
    mass: dict[int, float] = {}
    for b in range(n + 1):
        for c in range(n + 1 - b):
            log_p = math.lgamma(n + 1) - math.lgamma(b + 1) - math.lgamma(c + 1)
            log_p -= math.lgamma(n - b - c + 1)
            terms = ((b, pb), (c, pc), (n - b - c, 1 - pb - pc))
            if any(k and not p for k, p in terms):
                continue
            log_p += sum(k * math.log(p) for k, p in terms if k)
            mass[c - b] = mass.get(c - b, 0.0) + math.exp(log_p)
    total = 0.0
    for lead in sorted(mass):
        total += mass[lead]
        if total >= q:
            return lead / n
    return max(mass) / n


def test_one_run_known_counts() -> None:
    maj, rr = _decisions(10, 2, 7, 61)
    e = paired_estimate([(maj, rr)], seed=4)
    assert (e.questions, e.maj_only, e.rrmaj_only, e.boot, e.strata) == (80, 2, 7, 10_000, 1)
    assert e.maj == 12 / 80 and e.rrmaj == 17 / 80 and e.delta == 5 / 80
    assert e.p_mcnemar == mcnemar_exact(2, 7)
    assert e.lo < e.delta < e.hi
    assert e == paired_estimate([(maj, rr)], seed=4)  # seeded: the same numbers again
    assert PairCounts.of(maj, rr) == PairCounts(10, 2, 7, 61)


def test_the_interval_is_the_exact_bootstrap_within_one_question() -> None:
    cell = PairCounts(10, 6, 13, 51)
    e = paired_counts_estimate([cell], seed=11)
    step = 1 / cell.questions
    assert abs(e.lo - _exact_quantile(cell, 0.025)) <= step + 1e-12
    assert abs(e.hi - _exact_quantile(cell, 0.975)) <= step + 1e-12


def test_pooling_is_stratified_and_counts_each_question_once() -> None:
    varying = PairCounts(10, 2, 12, 16)  # 40 questions, RRMaj ahead by 10
    ties = PairCounts(40, 0, 0, 0)  # 40 questions both right in every resample
    alone = paired_counts_estimate([varying], seed=9)
    pooled = paired_counts_estimate([varying, ties], seed=9)
    # the same draws for the first stratum, the second adds 40 questions of no difference
    assert pooled.questions == 80 and pooled.delta == alone.delta / 2
    assert pooled.lo == pytest.approx(alone.lo / 2) and pooled.hi == pytest.approx(alone.hi / 2)
    assert pooled.p_mcnemar == mcnemar_exact(2, 12) and pooled.strata == 2


def test_a_run_sharing_questions_is_shown_not_pooled() -> None:
    def run(name: str, task: str, qids: list[str], counts: tuple[int, int, int, int]):
        maj, rr = _decisions(*counts)
        return RunDecisions(name, task, "3c2t", tuple(qids), tuple(maj), tuple(rr), seed=1)

    a = run("a", "aqua", [f"q{i}" for i in range(20)], (2, 3, 5, 10))
    b = run("b", "arith2", [f"q{i}" for i in range(20)], (5, 5, 2, 8))  # another task: no overlap
    c = run("c", "aqua", [f"q{i}" for i in range(10, 30)], (1, 1, 8, 10))  # 10 of a's questions
    pool = pool_runs([a, b, c], seed=2)
    assert pool.pooled_names == ("a", "b")
    assert pool.runs[2].left_out == "shares 10 of its 20 questions with a"
    assert pool.pooled == paired_estimate([(a.maj, a.rrmaj), (b.maj, b.rrmaj)], seed=2)
    assert pool.runs[2].estimate == paired_estimate([(c.maj, c.rrmaj)], seed=1)
    with pytest.raises(ValueError, match="one config"):
        pool_runs([a, RunDecisions("d", "x", "1c4t", ("q",), (True,), (False,))], seed=0)


def _simulated_power(n: int, discordance: float, delta: float, sims: int = 4000) -> float:
    rng = np.random.default_rng(5)
    pb, pc = (discordance - delta) / 2, (discordance + delta) / 2
    draws = rng.multinomial(n, [pb, pc, 1 - pb - pc], size=sims)
    found = [c > b and mcnemar_exact(int(b), int(c)) < 0.05 for b, c, _ in draws]
    return float(np.mean(found))


def test_power_is_what_a_simulation_of_the_test_finds() -> None:
    for n, discordance, delta in ((80, 0.25, 0.12), (320, 0.2, 0.05), (40, 0.3, 0.2)):
        exact = rescue_power(n, discordance, delta)
        assert exact == pytest.approx(_simulated_power(n, discordance, delta), abs=0.03)


def test_the_smallest_rescue_detected_at_80_percent_power() -> None:
    n, discordant = 80, 20
    found = smallest_rescue(n, discordant)
    assert found is not None
    assert rescue_power(n, 0.25, found) >= 0.8 > rescue_power(n, 0.25, found - 0.002)
    # four times the questions at the same discordance: about half the lead
    bigger = smallest_rescue(4 * n, 4 * discordant)
    assert bigger is not None and 0.4 < bigger / found < 0.6
    assert smallest_rescue(40, 0) is None  # no discordant question: no lead can show
    assert smallest_rescue(40, 3) is None  # too few: even 3 of 3 is not significant


def test_the_verdict_names_the_largest_rescue_left_open() -> None:
    assert verdict(-0.041, 0.053) == "no rescue detected; a rescue above +5.3 excluded"
    assert verdict(0.01, 0.2) == "rescue"
    assert verdict(-0.3, -0.1) == "no rescue detected; RRMaj below MAJ"
