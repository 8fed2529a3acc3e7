"""The paper's M-scaling, 3c2t, final-speaker and K-ablation tables beside a run's analyses:
matched on the keys each table has; a table without a match says which sweep would fill it."""

from __future__ import annotations

import math

import pytest

from rrdemo.report.paper import tables as paper
from rrdemo.report.paper.beside import PAPER, RUN
from rrdemo.report.paper.match import (
    k_beside,
    run_beside,
    scaling_3c2t_beside,
    scaling_beside,
    speaker_beside,
)
from rrdemo.report.speakers import FinalSpeakerRow
from rrdemo.report.tables import KPoint, ScalingPoint


def _point(label, method, m, mean, task="all", strength="strong", k=32) -> ScalingPoint:
    return ScalingPoint("tiny", strength, k, label, task, method, m, mean, 0.0)


def _lines(table, source):
    return [r for r in table.rows if r.source == source]


# -- M scaling ----------------------------------------------------------------------------------
def test_m_scaling_matches_strength_config_and_method_and_keeps_every_m() -> None:
    points = [
        _point("3c2t", "MAJ", 1, 0.10),
        _point("3c2t", "MAJ", 3, 0.20),
        _point("3c2t", "MAJ", 5, 0.25, task="logic3"),  # per dataset: not in the averages table
        _point("2c3t", "MAJ", 1, 0.50),  # the paper has no 2c3t scaling line
        _point("4c1t", "RRMaj", 1, 0.40, strength="moderate"),
    ]
    table = scaling_beside(points)
    assert table.value_columns == ("M=1", "M=3", "M=5", "M=10", "M=20", "M=30", "M=40")
    assert [(r.key, r.source) for r in table.rows] == [
        (("3c2t", "strong", "MAJ"), PAPER),
        (("3c2t", "strong", "MAJ"), RUN),
        (("4c1t", "moderate", "RRMaj"), PAPER),
        (("4c1t", "moderate", "RRMaj"), RUN),
    ]
    printed = next(
        r for r in paper.SCALING if (r.strength, r.config, r.method) == ("strong", "3c2t", "MAJ")
    )
    assert table.rows[0].values == (printed.mean[0], None, *printed.mean[1:])
    assert table.rows[1].values[:3] == (pytest.approx(10.0), pytest.approx(20.0), None)
    assert table.rows[1].who == "tiny, K=32"
    assert "does not name the model" in table.note


def test_m_scaling_without_a_match_says_what_to_run() -> None:
    table = scaling_beside([_point("1c4t", "MAJ", 1, 0.5)])
    assert table.rows == ()
    assert "1c4t (strong)" in table.note and "--configs 3c2t,4c1t" in table.note


def test_3c2t_breakdown_matches_dataset_and_method_only_under_strong() -> None:
    points = [
        _point("3c2t", "RRMaj", 1, 0.6, task="gsm8k"),
        _point("3c2t", "RRMaj", 1, 0.6, task="gsm8k", strength="moderate"),
        _point("3c2t", "Delta", 1, 0.1, task="gsm8k"),
    ]
    table = scaling_3c2t_beside(points)
    assert [(r.key, r.source) for r in table.rows] == [
        (("gsm8k", "RRMaj"), PAPER),
        (("gsm8k", "RRMaj"), RUN),
    ]
    assert table.value_columns == ("M=1", "M=40")
    assert table.rows[0].values == (67.5, 87.5)
    assert len(_lines(table, RUN)) == 1  # the moderate point is not set beside a strong table


# -- final speaker ------------------------------------------------------------------------------
def test_final_speaker_matches_the_config_and_keeps_counts_and_p() -> None:
    rows = [
        FinalSpeakerRow("tiny", "strong", 32, "3c2t", 0.6, 10, 0.5, 30, 0.2, 0.3, 0.07),
        FinalSpeakerRow("tiny", "strong", 32, "1c2t", 1 / 3, 5, 0.5, 5, 0.5, 0.0, 1.0),  # N = 3
        FinalSpeakerRow(
            "tiny", "moderate", 32, "4c1t", 0.8, 0, math.nan, 9, 0.1, math.nan, math.nan
        ),
    ]
    table = speaker_beside(rows)
    keys = [(r.key, r.source, r.who) for r in table.rows]
    assert keys == [
        (("3c2t", "0.6"), PAPER, "Llama-4-Scout-17B"),
        (("3c2t", "0.6"), PAPER, "Mistral-3.1-24B"),
        (("3c2t", "0.6"), RUN, "tiny, strong, K=32"),
        (("4c1t", "0.8"), PAPER, "Llama-4-Scout-17B"),
        (("4c1t", "0.8"), PAPER, "Mistral-3.1-24B"),
        (("4c1t", "0.8"), RUN, "tiny, moderate, K=32"),
    ]
    assert table.rows[0].values == (71.68, 565, 70.84, 871, 0.84, 0.7657)
    assert table.rows[2].values == (50.0, 10, 20.0, 30, 30.0, 0.07)
    assert table.rows[5].values == (None, 0, 10.0, 9, None, None)
    assert "not the paper's Llama-4-Scout-17B, Mistral-3.1-24B" in table.note


# -- K ablation ---------------------------------------------------------------------------------
def test_k_ablation_matches_config_and_dataset_with_every_k_as_a_column() -> None:
    points = [
        KPoint("tiny", "strong", "2c1t", "logic3", 30, 0.25, 0.1),
        KPoint("tiny", "strong", "2c1t", "logic3", 64, 0.5, 0.1),
        KPoint("tiny", "strong", "2c1t", "gsm8k", 30, 0.5, 0.1),  # not in the paper's K table
        KPoint("tiny", "strong", "3c2t", "logic3", 30, 0.5, 0.1),  # another config
    ]
    table = k_beside(points)
    assert table.value_columns == tuple(f"K={k}" for k in (10, 30, 64, 75, 150, 300, 500))
    assert [(r.key, r.source) for r in table.rows] == [
        (("2c1t", "logic3"), PAPER),
        (("2c1t", "logic3"), RUN),
    ]
    assert table.rows[0].values == (10.2, 27.5, None, 32.2, 33.5, 34.8, 34.2)
    assert table.rows[1].values == (None, 25.0, 50.0, None, None, None, None)
    assert "Llama-3-8B" in table.note
    assert k_beside(points[3:]).rows == ()
    assert "--configs 2c1t" in k_beside(points[3:]).note


def _hinted_plan(note: str):
    """The plan of the `rrdemo experiment` flags a table's no-match note suggests."""
    import argparse
    import re
    import shlex

    from rrdemo.cli.experiment import add_arguments, sweep_from_args
    from rrdemo.runs.spec import plan_sweep

    flags = re.search(r"`rrdemo experiment ([^`]+)`", note).group(1)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([*shlex.split(flags), "--out", "x.jsonl", "--n", "2"])
    return plan_sweep(sweep_from_args(args))


def test_the_k_ablation_hint_reproduces_the_papers_design() -> None:
    """N = M = 3, 2c1t, t mod N, and room for every agent's turn up to K = 500 (4,096 cap)."""
    plan = _hinted_plan(k_beside([]).note)
    configs = [c.config for c in plan.conditions]
    assert sorted({c.k for c in configs}) == [10, 30, 75, 150, 300, 500]
    assert {c.task.name for c in plan.conditions} == {"logic7", "logic3", "track7"}
    for config in configs:
        assert (config.label, config.n, config.resolved_m) == ("2c1t", 3, 3)
        assert config.order == "fixed" and config.max_tokens == 4096
        assert config.max_tokens >= 2 * config.n * config.k  # every agent writes at least twice


def test_the_m_scaling_hints_draw_m_up_to_40_from_pools_of_50() -> None:
    for table in (scaling_beside([]), scaling_3c2t_beside([])):
        plan = _hinted_plan(table.note)
        assert {c.config.resolved_m for c in plan.conditions} == {50}, table.name
        assert "M* = 50" in table.note


# -- every table at once ------------------------------------------------------------------------
def test_run_beside_is_every_table_in_report_order():
    points = [_point("3c2t", "MAJ", 1, 0.1), _point("3c2t", "RRMaj", 1, 0.6, task="gsm8k")]
    speaker = [FinalSpeakerRow("tiny", "strong", 32, "3c2t", 0.6, 10, 0.5, 30, 0.2, 0.3, 0.07)]
    kpoints = [KPoint("tiny", "strong", "2c1t", "logic3", 30, 0.25, 0.1)]
    tables = run_beside([], points, speaker, kpoints)
    assert [t.name for t in tables] == [
        "settings",
        "m_scaling",
        "m_scaling_3c2t",
        "final_speaker",
        "k_ablation",
        "heterogeneous",
    ]
    assert tables[1:5] == [
        scaling_beside(points),
        scaling_3c2t_beside(points),
        speaker_beside(speaker),
        k_beside(kpoints),
    ]
    assert tables[0].rows == tables[5].rows == ()  # no main-table rows: no setting to match
    assert all(t.note for t in tables)
