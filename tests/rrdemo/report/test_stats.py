"""rrdemo.report.stats: one vote, one draw of a pool, the M = 1 anchor, the trial matrix, on hand-built rows."""

from __future__ import annotations

import numpy as np
import pytest

from rrdemo.report.stats import (
    expected_single,
    group_pools,
    interval95,
    select,
    trial_matrix,
    vote,
)
from tests.support.outcomes import GOLD, OTHER, TARGET, row, trap


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


def test_trial_matrix_is_reproducible_from_its_seed():
    pool = next(iter(group_pools(trap(3, m_star=10, rr_right=6)).values()))
    a = trial_matrix(pool, "RRMaj", 5, seed=3)
    assert np.array_equal(a, trial_matrix(pool, "RRMaj", 5, seed=3))
    assert a.shape == (8, 50)


def test_interval95_can_leave_out_undefined_resamples():
    samples = np.concatenate([np.linspace(0.0, 1.0, 101), [np.nan] * 20])
    lo, hi = interval95(samples, skip_nan=True)
    assert (lo, hi) == pytest.approx(interval95(np.linspace(0.0, 1.0, 101)))
    assert 0.0 < lo < 0.05 and 0.95 < hi < 1.0
    assert all(np.isnan(interval95(samples)))


def test_wilson_interval_matches_the_formula_and_stays_inside_zero_one() -> None:
    import math

    from rrdemo.report.stats import wilson95

    lo, hi = wilson95(7, 10)
    assert (round(lo, 4), round(hi, 4)) == (0.3968, 0.8922)  # Wilson (1927), z = 1.96
    assert wilson95(0, 20)[0] == 0.0 and 0.16 < wilson95(0, 20)[1] < 0.17
    assert wilson95(20, 20)[1] == 1.0 and 0.83 < wilson95(20, 20)[0] < 0.84
    assert all(math.isnan(x) for x in wilson95(0, 0))
