"""The paper's analyses on hand-built outcome rows whose right answers follow from the scenario."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rrdemo.analysis.pools import Outcome, expected_single, group_pools, select, trial_matrix, vote
from rrdemo.analysis.speaking import final_speaker
from rrdemo.analysis.tables import asymmetric_yield, k_ablation, m_scaling, main_table, rho_curve

GOLD, TARGET, OTHER = "(B)", "(C)", "(A)"


def row(c, n, qid, method, j, key, *, corrupted, task="logic3", k=4, m_star=5, strength="strong"):
    return Outcome(
        condition=f"{task}:{c}c{n - c}t:k{k}:{strength}",
        ensemble="m",
        task=task,
        strength=strength,
        k=k,
        max_tokens=64,
        n=n,
        c=c,
        m_star=m_star,
        question_id=qid,
        method=method,
        trajectory=j,
        vote_key=key,
        correct=key == GOLD,
        corrupted=corrupted,
    )


def trap(c, n=5, questions=8, m_star=5, rr_right=None, task="logic3", k=4):
    """The consensus trap: every corrupted MAJ answer is the target, every truthful one the gold;
    RR trajectories are right `rr_right` times out of M* (default all), else the target."""
    rr_right = m_star if rr_right is None else rr_right
    rows = []
    for q in range(questions):
        qid = f"q{q}"
        for j in range(m_star):
            bad = (
                j % n < c
            )  # MAJ answer j comes from agent j mod N; the first c seats are corrupted
            rows.append(
                row(
                    c,
                    n,
                    qid,
                    "MAJ",
                    j,
                    TARGET if bad else GOLD,
                    corrupted=bad,
                    task=task,
                    k=k,
                    m_star=m_star,
                )
            )
            rows.append(
                row(
                    c,
                    n,
                    qid,
                    "RRMaj",
                    j,
                    GOLD if j < rr_right else TARGET,
                    corrupted=(j % n) < c,
                    task=task,
                    k=k,
                    m_star=m_star,
                )
            )
    return rows


# -- one vote, one draw, the M = 1 anchor -----------------------------------------------------------
def _vote(keys, rng, trials=1):
    mask = np.ones((trials, len(keys)), dtype=bool)
    return vote(mask, keys, [k == GOLD for k in keys], rng)


def test_vote_follows_the_plurality_and_breaks_ties_at_random():
    rng = np.random.default_rng(0)
    assert _vote([GOLD, GOLD, TARGET], rng)[0] == 1.0
    assert _vote([TARGET, TARGET, GOLD], rng)[0] == 0.0
    assert _vote([OTHER, GOLD, GOLD, TARGET, TARGET, TARGET], rng)[0] == 0.0
    ties = _vote([GOLD, TARGET], rng, trials=400)
    assert set(ties) == {0.0, 1.0} and 0.4 < ties.mean() < 0.6
    three = _vote([GOLD, TARGET, OTHER], rng, trials=900)
    assert 0.25 < three.mean() < 0.42  # each of three tied answers wins a third of the time
    # unreadable answers do not vote; a vote with none readable is wrong
    assert _vote([None, None, GOLD], rng)[0] == 1.0
    assert _vote([None, None], rng)[0] == 0.0


def test_vote_counts_only_the_drawn_members():
    rng = np.random.default_rng(0)
    keys = [GOLD, TARGET, TARGET]
    mask = np.array([[True, False, False], [True, True, True], [False, True, False]])
    assert list(vote(mask, keys, [k == GOLD for k in keys], rng)) == [1.0, 0.0, 0.0]


def test_maj_at_m1_is_the_papers_expectation_not_the_pool_mean():
    # N = 3, c = 2, M* = 5: seats 0,1,2,0,1 -> four corrupted answers (two right), one truthful (right)
    keys = [GOLD, TARGET, GOLD, GOLD, TARGET]
    rows = [row(2, 3, "q", "MAJ", j, key, corrupted=j % 3 < 2) for j, key in enumerate(keys)]
    p_corrupted, p_truthful = 2 / 4, 1.0
    assert expected_single(rows, "MAJ", 3, 2) == pytest.approx(
        2 / 3 * p_corrupted + 1 / 3 * p_truthful
    )
    assert expected_single(rows, "MAJ", 3, 2) != pytest.approx(3 / 5)
    assert expected_single(rows, "RRMaj", 3, 2) == pytest.approx(3 / 5)  # p_rr: one trajectory


def test_maj_draws_keep_the_corrupted_share_and_rr_draws_m_members():
    corrupted = np.array([j % 5 < 3 for j in range(10)])  # 3c2t, M* = 10: six corrupted answers
    rng = np.random.default_rng(1)
    mask = select(corrupted, "MAJ", 5, 5, 3, 500, rng)
    assert set(mask.sum(axis=1)) == {5}
    assert set(mask[:, corrupted].sum(axis=1)) == {3}
    shares = select(corrupted, "MAJ", 4, 5, 3, 4000, rng)[:, corrupted].sum(axis=1)
    assert set(shares) == {2, 3}
    assert shares.mean() == pytest.approx(4 * 3 / 5, abs=0.05)
    rr = select(corrupted, "RRMaj", 4, 5, 3, 4000, rng)
    assert set(rr.sum(axis=1)) == {4}
    assert rr.mean(axis=0) == pytest.approx(np.full(10, 0.4), abs=0.05)  # every member alike
    assert select(corrupted, "RRMaj", 10, 5, 3, 3, rng).all()


# -- the main table -----------------------------------------------------------------------------------
def test_main_table_shows_maj_collapse_and_rr_rescue_in_the_papers_layout():
    rows = main_table([r for c in (0, 1, 3, 5) for r in trap(c)])
    assert len(rows) == 1
    t = rows[0]
    assert (t.n, t.m) == (5, 5)
    assert t.ceiling.maj.mean == 1.0 and t.floor.maj.mean == 0.0
    assert [cell.label for cell in t.cells] == ["1c4t", "3c2t"]
    minority, majority = t.cells
    assert minority.maj.mean == 1.0  # 4 truthful votes beat 1 corrupted vote
    assert majority.maj.mean == 0.0  # 3 corrupted votes beat 2 truthful votes
    assert majority.rrmaj.mean == 1.0 and majority.delta.mean == 1.0
    assert minority.delta.mean == 0.0


def test_intervals_bracket_the_mean_and_widen_with_disagreement():
    rows = []
    for q in range(20):  # half the questions right for RR, half wrong
        for j in range(5):
            rows.append(row(2, 5, f"q{q}", "MAJ", j, GOLD, corrupted=j < 2))
            rows.append(row(2, 5, f"q{q}", "RRMaj", j, GOLD if q % 2 else TARGET, corrupted=j < 2))
    cell = main_table(rows)[0].cells[0]
    assert cell.rrmaj.mean == pytest.approx(0.5)
    assert cell.rrmaj.lo < 0.5 < cell.rrmaj.hi
    assert cell.maj.lo == cell.maj.hi == 1.0
    assert cell.delta.lo < -0.5 + 1e-9 and cell.delta.hi > -0.5 - 1e-9
    assert cell.rrmaj.n_questions == 20


# -- M scaling ------------------------------------------------------------------------------------------
def test_m_scaling_shows_the_condorcet_collapse_of_maj_and_the_rise_of_rrmaj():
    points = m_scaling(trap(3, m_star=10, rr_right=7))
    at = {(p.method, p.m): p for p in points if p.task == "all"}
    assert sorted({m for _, m in at}) == [1, 5, 10]
    assert at[("MAJ", 1)].mean == pytest.approx(
        2 / 5
    )  # t/N P(truthful right), corrupted never right
    assert at[("MAJ", 5)].mean == 0.0 and at[("MAJ", 10)].mean == 0.0
    assert at[("RRMaj", 1)].mean == pytest.approx(0.7)  # p_rr
    assert at[("RRMaj", 10)].mean == 1.0  # 7 right trajectories outvote 3
    assert at[("RRMaj", 1)].mean < at[("RRMaj", 5)].mean <= at[("RRMaj", 10)].mean
    assert at[("Delta", 10)].mean == pytest.approx(1.0)


def test_m_scaling_averages_datasets_trial_by_trial():
    rows = trap(3, m_star=5, task="logic3") + trap(3, m_star=5, rr_right=0, task="gsm8k")
    points = m_scaling(rows)
    mean = {(p.task, p.method, p.m): p.mean for p in points}
    for m in (1, 5):
        expect = (mean[("logic3", "RRMaj", m)] + mean[("gsm8k", "RRMaj", m)]) / 2
        assert mean[("all", "RRMaj", m)] == pytest.approx(expect)


def test_trial_matrix_is_reproducible_from_its_seed():
    pool = next(iter(group_pools(trap(3, m_star=10, rr_right=6)).values()))
    a = trial_matrix(pool, "RRMaj", 5, seed=3)
    assert np.array_equal(a, trial_matrix(pool, "RRMaj", 5, seed=3))
    assert a.shape == (8, 50)


# -- final speaker, yield, rho, K -----------------------------------------------------------------------
def _speaker_rows(clean_right, corrupt_right, n=60):
    rows = []
    for j in range(n):
        rows.append(
            row(2, 5, f"q{j}", "RRMaj", 0, GOLD if j < clean_right else TARGET, corrupted=False)
        )
        rows.append(
            row(2, 5, f"q{j}", "RRMaj", 1, GOLD if j < corrupt_right else TARGET, corrupted=True)
        )
    return rows


def test_final_speaker_fisher_test_separates_real_gaps_from_none():
    gap = final_speaker(_speaker_rows(54, 6))[0]
    assert (gap.clean_n, gap.corrupt_n) == (60, 60)
    assert gap.clean_acc == pytest.approx(0.9) and gap.corrupt_acc == pytest.approx(0.1)
    assert gap.delta == pytest.approx(0.8) and gap.p_value < 1e-6
    same = final_speaker(_speaker_rows(30, 30))[0]
    assert same.delta == 0.0 and same.p_value == pytest.approx(1.0)
    # bounds have no mixed speakers and are left out; MAJ rows are not trajectories
    assert final_speaker(trap(0) + trap(5)) == []


def test_final_speaker_with_one_empty_group_has_no_p_value():
    rows = [r for r in _speaker_rows(30, 30) if not r.corrupted]
    result = final_speaker(rows)[0]
    assert result.corrupt_n == 0 and math.isnan(result.p_value)


def test_asymmetric_yield_averages_deltas_on_each_side_of_one_half():
    table = main_table([r for c in (0, 1, 2, 3, 4, 5) for r in trap(c, rr_right=4)])
    by_c = {cell.c: cell.delta.mean for cell in table[0].cells}
    y = [y for y in asymmetric_yield(table) if y.task == "logic3"][0]
    assert (y.n_safe, y.n_compromised) == (2, 2)
    assert y.safe_delta == pytest.approx((by_c[1] + by_c[2]) / 2)
    assert y.compromised_delta == pytest.approx((by_c[3] + by_c[4]) / 2)
    assert y.compromised_delta > 0  # RRMaj rescues where MAJ collapses


def test_rho_curve_has_both_methods_at_every_rho_and_a_mean_over_datasets():
    rows = [
        r
        for c in (0, 1, 3, 5)
        for t in ("logic3", "gsm8k")
        for r in trap(c, task=t, rr_right=4 if t == "gsm8k" else 5)
    ]
    points = rho_curve(main_table(rows))
    keys = {(p.task, p.method) for p in points}
    assert keys == {(t, m) for t in ("logic3", "gsm8k", "all") for m in ("MAJ", "RRMaj")}
    rhos = {key: sorted(p.rho for p in points if (p.task, p.method) == key) for key in keys}
    for key, values in rhos.items():
        assert values == [0.0, 0.2, 0.6, 1.0], key
    by = {(p.task, p.method, p.rho): p.accuracy for p in points}
    assert by[("all", "RRMaj", 0.6)] == pytest.approx(
        (by[("logic3", "RRMaj", 0.6)] + by[("gsm8k", "RRMaj", 0.6)]) / 2
    )
    assert by[("logic3", "MAJ", 0.6)] == 0.0


def test_k_ablation_reads_rrmaj_accuracy_per_k():
    rows = trap(2, n=3, m_star=3, k=10, rr_right=0) + trap(2, n=3, m_star=3, k=150, rr_right=3)
    points = k_ablation(main_table(rows))
    rr = {(p.task, p.k): p.rrmaj for p in points if p.label == "2c1t"}
    assert rr[("logic3", 10)] == 0.0 and rr[("logic3", 150)] == 1.0
    assert rr[("all", 150)] == 1.0
    maj = {p.k: p.maj for p in points if p.label == "2c1t" and p.task == "logic3"}
    assert maj[10] == maj[150]  # K does not touch MAJ
