"""MAJ predicted at the vote beside the committed evidence runs' own MAJ decisions."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrdemo.calibration.check import observed_maj, prediction_check
from rrdemo.calibration.log import read_calibration
from rrdemo.report.paired import paired_by_condition
from rrdemo.runs.log import read_log

ROOT = Path(__file__).resolve().parents[3]
RUN = ROOT / "assets" / "evidence" / "log.jsonl"
CAL = ROOT / "assets" / "calibration" / "qwen15b_arith.jsonl"
pytestmark = pytest.mark.skipif(not RUN.is_file(), reason="the evidence run is not committed")


def test_observed_maj_is_the_paired_tables_maj_the_same_estimator():
    log = read_log(RUN)
    observed = observed_maj(log)
    paired = paired_by_condition(log)
    assert paired
    for row in paired.values():
        (n, right), *_ = [
            v for k, v in observed.items() if k[1:] == (row.task, "direct", row.strength, row.label)
        ]
        assert n == row.questions
        assert right / n == pytest.approx(row.maj)


def test_each_config_the_run_measured_gets_its_prediction():
    log, cal = read_log(RUN), read_calibration(CAL)
    rows = prediction_check(cal, log)
    assert {r.config for r in rows} == {c["label"] for c in log.conditions.values()}
    for r in rows:
        assert r.predicted is not None and r.calibration_questions == 20
        assert r.observed.lo <= r.observed.value <= r.observed.hi
    only = {u["question_id"] for u in log.finished_units()[:7]}
    units = [u for u in log.finished_units() if u["question_id"] in only]
    assert sum(r.questions for r in prediction_check(cal, log, only)) == len(units) < len(rows) * 40


def test_docs_hold_the_table_the_tool_prints():
    from tools.prediction_check import table

    assert table() in (ROOT / "docs" / "evidence.md").read_text(encoding="utf-8")
