"""Ranking math on hand-made rows with hand-computed expectations."""

from __future__ import annotations

from dataclasses import replace

import pytest

from leaderboard.ranking import (
    RHO_BANDS,
    accuracy_by_rho,
    filter_rows,
    independent,
    pooled_line,
    pooled_lines,
    rank_models,
    row_counts,
    score_model,
)
from rrdemo.report.paired import condition_seed
from rrdemo.report.pooled import PairCounts, paired_counts_estimate, pool_seed
from tests.support.samples import MODEL_A
from tests.support.samples import board_row as row


def _paired(r, b: int):
    """`r` with paired counts: b questions only MAJ got right (and as many more only RRMaj)."""
    n = r.n_questions
    c = b + round(r.rrmaj_accuracy * n) - round(r.maj_accuracy * n)
    return type(r)(**{**r.__dict__, "maj_only": b, "rrmaj_only": c})


def test_score_of_a_model_by_hand() -> None:
    score = score_model("org/a", MODEL_A + [row("org/b", 3, 2, 0.0, 1.0)])
    assert score.n_majority_rows == 2 and score.n_minority_rows == 2
    assert score.rrmaj_majority == pytest.approx((0.60 + 0.30) / 2)
    assert score.maj_majority == pytest.approx((0.20 + 0.10) / 2)
    assert score.mean_gain == pytest.approx((0.40 + 0.20) / 2)
    assert score.robustness_tax == pytest.approx((-0.10 + 0.05) / 2)
    assert score.asymmetric_yield == pytest.approx(0.30 - 0.025)


def test_rows_with_paired_counts_leave_delta_to_the_pooled_lines() -> None:
    rows = [_paired(r, b) for r, b in zip(MODEL_A, (0, 10, 5, 5, 5, 0), strict=True)]
    score = score_model("org/a", rows)
    assert score.intervals == "paired"
    assert score.rrmaj_majority == pytest.approx(0.45)
    # RRMaj's interval: each row's questions resampled, so it holds the mean, narrower than rows
    ci = score.rrmaj_majority_ci
    assert ci is not None and ci.lo < 0.45 < ci.hi and 0.05 < ci.hi - ci.lo < 0.30
    # RRMaj - MAJ is not averaged over rows: no gain, tax or yield on the ranking's line
    assert score.mean_gain is None and score.robustness_tax is None
    assert score.asymmetric_yield is None
    lines = {line.label: line for line in pooled_lines(rows)}
    assert sorted(lines) == ["0c5t", "1c4t", "2c3t", "3c2t", "4c1t", "5c0t"]
    assert lines["3c2t"].estimate.delta == pytest.approx(0.40)  # one row: its own Delta


def test_rows_without_paired_counts_give_no_delta_interval_and_a_stated_n_one() -> None:
    score = score_model("org/a", MODEL_A)
    assert score.intervals == "stated n"
    ci = score.rrmaj_majority_ci  # a binomial over the rows' 100 questions each
    assert ci is not None and ci.lo < 0.45 < ci.hi and 0.08 < ci.hi - ci.lo < 0.2
    empty = score_model("org/z", MODEL_A)
    assert empty.rrmaj_majority is None and empty.n_majority_rows == 0


def test_rows_that_may_share_questions_are_shown_not_averaged_or_pooled() -> None:
    first = _paired(row("org/a", 3, 2, 0.20, 0.60, n_questions=80, dataset="aqua"), 4)
    again = _paired(  # the same cell under another EOS policy, a later submission
        row("org/a", 3, 2, 0.10, 0.90, n_questions=40, dataset="aqua", submission_id=2), 1
    )
    other = _paired(row("org/a", 3, 2, 0.50, 0.40, n_questions=40, dataset="logic3"), 8)
    kept, why = independent([again, first, other])
    assert kept == [first, other]
    assert why == [
        "aqua 3c2t of submission #2: may stand on the questions of submission #1 "
        "(same model, task, config and injection)"
    ]
    assert independent([again, replace(first, strength="strong")])[1] == []
    score = score_model("org/a", [first, again])
    assert score.rrmaj_majority == pytest.approx(0.60) and score.left_out == tuple(why)
    (line,) = pooled_lines([again, first, other])
    assert line.rows == (first, other) and line.left_out == tuple(why)
    assert line.estimate == pooled_line([first, other])


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
    b = _paired(row("org/a", 3, 2, 0.50, 0.40, n_questions=40, dataset="aqua"), 8)
    assert row_counts(a) == PairCounts(12, 4, 36, 28)
    assert row_counts(row("org/a", 3, 2, 0.2, 0.6)) is None
    line = pooled_line([a, b], seed=3)
    assert line == pooled_line([b, a], seed=3)  # seeded, and the rows' order does not matter
    assert (line.questions, line.maj_only, line.rrmaj_only) == (120, 12, 40)
    assert line.delta == pytest.approx((36 - 4 + 4 - 8) / 120)
    assert line.lo < line.delta < line.hi
    assert pooled_line([a, row("org/a", 3, 2, 0.2, 0.6)]) is None
    # unseeded: several rows as the pool report seeds their counts, one row as its run's report
    counts = [row_counts(a), row_counts(b)]
    assert pooled_line([a, b]) == paired_counts_estimate(counts, pool_seed("3c2t", counts))
    cond = {"task": "gsm8k", "label": "3c2t", "strength": "moderate", "ensemble": "org/a"}
    assert pooled_line([a]) == paired_counts_estimate(counts[:1], condition_seed(cond))


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
