"""Ranking math on hand-made rows with hand-computed expectations."""

from __future__ import annotations

import pytest

from leaderboard.ranking import (
    RHO_BANDS,
    accuracy_by_rho,
    bootstrap_interval,
    filter_rows,
    rank_models,
    score_model,
)
from tests.support.samples import MODEL_A
from tests.support.samples import board_row as row


def test_score_of_a_model_by_hand() -> None:
    score = score_model("org/a", MODEL_A + [row("org/b", 3, 2, 0.0, 1.0)])
    assert score.n_majority_rows == 2 and score.n_minority_rows == 2
    assert score.rrmaj_majority == pytest.approx((0.60 + 0.30) / 2)
    assert score.maj_majority == pytest.approx((0.20 + 0.10) / 2)
    assert score.mean_gain == pytest.approx((0.40 + 0.20) / 2)
    assert score.robustness_tax == pytest.approx((-0.10 + 0.05) / 2)
    assert score.asymmetric_yield == pytest.approx(0.30 - 0.025)
    for interval, lo, hi in (
        (score.mean_gain_ci, 0.20, 0.40),
        (score.robustness_tax_ci, -0.10, 0.05),
        (score.rrmaj_majority_ci, 0.30, 0.60),
        (score.asymmetric_yield_ci, 0.10, 0.45),
    ):
        assert interval is not None and lo - 1e-12 <= interval.lo <= interval.hi <= hi + 1e-12


def test_too_few_rows_give_no_interval_and_missing_bands_give_none() -> None:
    score = score_model("org/b", [row("org/b", 3, 2, 0.3, 0.5)])
    assert score.mean_gain == pytest.approx(0.2)
    assert score.robustness_tax is None and score.asymmetric_yield is None
    assert score.mean_gain_ci is None and score.asymmetric_yield_ci is None
    empty = score_model("org/z", MODEL_A)
    assert empty.rrmaj_majority is None and empty.n_majority_rows == 0


def test_board_rows_fall_in_the_band_of_their_setting() -> None:
    for (c, t), band in {(1, 4): "minority", (3, 2): "majority", (0, 5): "bound"}.items():
        r = row("m/x", c, t, 0.5, 0.5)
        assert r.band == band and r.label == f"{c}c{t}t" and r.rho == c / 5


def test_ranking_orders_by_rrmaj_under_majority_corruption() -> None:
    rows = MODEL_A + [
        row("org/b", 3, 2, 0.10, 0.50),
        row("org/c", 1, 4, 0.90, 0.95),  # no majority rows: ranked last
    ]
    assert [s.model for s in rank_models(rows)] == ["org/b", "org/a", "org/c"]


def test_bootstrap_interval_is_deterministic_and_brackets_the_mean() -> None:
    values = [0.1, 0.4, 0.35, 0.2, 0.9]
    first = bootstrap_interval(values, seed=3)
    assert first == bootstrap_interval(values, seed=3)
    assert first is not None and min(values) <= first.lo < sum(values) / 5 < first.hi <= max(values)
    assert bootstrap_interval([0.5]) is None
    assert bootstrap_interval([0.5, 0.5]) is not None


def test_filters_and_chart_points() -> None:
    rows = MODEL_A + [
        row("org/a", 3, 2, 0.40, 0.80, dataset="aqua", strength="strong", source="paper"),
    ]
    assert len(filter_rows(rows, dataset="aqua")) == 1
    assert len(filter_rows(rows, strength="moderate", rho_band=RHO_BANDS[2])) == 2
    assert len(filter_rows(rows, rho_band=RHO_BANDS[3])) == 2
    assert len(filter_rows(rows, source="paper", dataset="gsm8k")) == 0
    assert len(filter_rows(rows, dataset="all", strength=None)) == 7
    assert [r.label for r in filter_rows(rows, config="3c2t")] == ["3c2t", "3c2t"]
    assert len(filter_rows(rows, config="3c2t", dataset="aqua", model="org/a")) == 1
    assert filter_rows(rows, model="org/zzz") == []
    points = dict((p[0], p[1:]) for p in accuracy_by_rho(rows)["org/a"])
    assert points[0.6] == (pytest.approx(0.30), pytest.approx(0.70))  # mean over both datasets
    assert sorted(points) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
