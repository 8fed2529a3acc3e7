"""Ranking math on hand-made rows with hand-computed expectations."""

from __future__ import annotations

import pytest

from leaderboard.ranking import (
    RHO_BANDS,
    accuracy_by_rho,
    filter_rows,
    pooled_line,
    rank_models,
    row_counts,
    score_model,
)
from rrdemo.report.pooled import PairCounts, paired_counts_estimate
from tests.support.samples import MODEL_A
from tests.support.samples import board_row as row


def _paired(r, b: int):
    """`r` with paired counts: b questions only MAJ got right (and as many more only RRMaj)."""
    n = r.n_questions
    c = b + round(r.rrmaj_accuracy * n) - round(r.maj_accuracy * n)
    return type(r)(**{**r.__dict__, "maj_only": b, "rrmaj_only": c})


def test_score_of_a_model_by_hand() -> None:
    rows = [_paired(r, b) for r, b in zip(MODEL_A, (0, 10, 5, 5, 5, 0), strict=True)]
    score = score_model("org/a", rows + [row("org/b", 3, 2, 0.0, 1.0)])
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
        # each row's questions resampled: the interval holds the estimate, wider than the rows
        assert interval is not None and interval.lo < (lo + hi) / 2 < interval.hi
    assert score.intervals == "paired"
    assert score.mean_gain_ci.hi - score.mean_gain_ci.lo > 0.05


def test_rows_without_paired_counts_give_no_delta_interval_and_a_stated_n_one() -> None:
    score = score_model("org/a", MODEL_A)
    assert score.intervals == "stated n"
    assert score.mean_gain_ci is None and score.asymmetric_yield_ci is None
    ci = score.rrmaj_majority_ci  # a binomial over the rows' 100 questions each
    assert ci is not None and ci.lo < 0.45 < ci.hi and 0.08 < ci.hi - ci.lo < 0.2


def test_one_row_with_counts_has_its_questions_interval() -> None:
    one = _paired(row("org/b", 3, 2, 0.3, 0.5), 10)
    score = score_model("org/b", [one])
    assert score.mean_gain == pytest.approx(0.2)
    alone = paired_counts_estimate([row_counts(one)], seed=1)
    width = score.mean_gain_ci.hi - score.mean_gain_ci.lo
    assert width == pytest.approx(alone.hi - alone.lo, abs=0.021)  # one grid step of 100
    assert score.robustness_tax is None and score.asymmetric_yield is None
    assert score.robustness_tax_ci is None and score.asymmetric_yield_ci is None
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


def test_row_counts_and_the_pooled_line() -> None:
    a = _paired(row("org/a", 3, 2, 0.20, 0.60, n_questions=80), 4)
    b = _paired(row("org/a", 3, 2, 0.50, 0.40, n_questions=40), 8)
    assert row_counts(a) == PairCounts(12, 4, 36, 28)
    assert row_counts(row("org/a", 3, 2, 0.2, 0.6)) is None
    line = pooled_line([a, b], seed=3)
    assert line == pooled_line([a, b], seed=3)  # seeded
    assert (line.questions, line.maj_only, line.rrmaj_only) == (120, 12, 40)
    assert line.delta == pytest.approx((36 - 4 + 4 - 8) / 120)
    assert line.lo < line.delta < line.hi
    assert pooled_line([a, row("org/a", 3, 2, 0.2, 0.6)]) is None


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
