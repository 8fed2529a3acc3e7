"""A run that varies only what RR reads (its end-of-sequence policy), running RRMaj alone, paired
with the run it varies (rrdemo.report.policies); `methods` in the sweep."""

from __future__ import annotations

import dataclasses
import json

import pytest

from rrdemo.errors import RRError
from rrdemo.report.policies import policy_rows
from rrdemo.report.write import write_report
from rrdemo.runs.log import read_log
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import Plan, normalize_sweep
from tests.support.fakes import fake_plan, fake_pool


def _rr_only(plan: Plan, policy: str = "pass") -> Plan:
    conditions = tuple(
        dataclasses.replace(
            c, config=dataclasses.replace(c.config, eos_policy=policy), methods=("RRMaj",)
        )
        for c in plan.conditions
    )
    return Plan({**plan.sweep, "methods": ["RRMaj"]}, conditions)


def test_a_rr_only_run_pairs_with_the_run_it_varies(tmp_path) -> None:
    base, other = tmp_path / "end.jsonl", tmp_path / "pass.jsonl"
    run_plan(fake_plan(), base, fake_pool(), progress=False)
    run_plan(_rr_only(fake_plan()), other, fake_pool(), progress=False)
    records = [json.loads(line) for line in other.read_text().splitlines()[1:]]
    assert {r["method"] for r in records if r["type"] == "trajectory"} == {"RRMaj"}
    assert all(set(r["votes"]) == {"RRMaj"} for r in records if r["type"] == "done")
    rows = policy_rows(read_log(base), read_log(other))
    assert [r.label for r in rows] == ["0c3t", "2c1t"]
    lines = [json.loads(line) for line in base.read_text().splitlines()]
    label_of = {c["key"]: c["label"] for c in lines[0]["conditions"]}
    done = [r for r in lines[1:] if r["type"] == "done"]
    for row in rows:
        assert (row.base, row.other) == ("end", "pass") and row.questions == 3
        votes = [r["votes"] for r in done if label_of[r["condition"]] == row.label]
        assert row.maj == pytest.approx(sum(v["MAJ"]["correct"] for v in votes) / len(votes))
        assert row.rrmaj == pytest.approx(sum(v["RRMaj"]["correct"] for v in votes) / len(votes))
        assert row.other_vs_rr.delta == pytest.approx(row.rrmaj_other - row.rrmaj)
        assert row.other_vs_maj.delta == pytest.approx(row.rrmaj_other - row.maj)
    written = write_report(other, tmp_path / "report", png=False, paired_with=base)
    assert (tmp_path / "report" / "policies.md") in written
    assert "Paired with `end.jsonl`" in (tmp_path / "report" / "report.md").read_text()


def test_methods_are_named_in_the_sweep_only_when_one_is_left_out() -> None:
    assert "methods" not in normalize_sweep({"tasks": "logic3", "configs": "3c2t"})
    assert "methods" not in normalize_sweep({"configs": "3c2t", "methods": "RRMaj,MAJ"})
    assert normalize_sweep({"configs": "3c2t", "methods": ["RRMaj"]})["methods"] == ["RRMaj"]
    with pytest.raises(RRError, match="method"):
        normalize_sweep({"configs": "3c2t", "methods": "RR"})


def test_a_rr_only_report_sets_nothing_against_a_maj_it_did_not_decode(tmp_path) -> None:
    base, other = tmp_path / "end.jsonl", tmp_path / "pass.jsonl"
    run_plan(fake_plan(), base, fake_pool(), progress=False)
    run_plan(_rr_only(fake_plan()), other, fake_pool(), progress=False)
    written = {p.name for p in write_report(other, tmp_path / "rr", png=False, paired_with=base)}
    report = (tmp_path / "rr" / "report.md").read_text()
    assert "decoded RRMaj alone" in report and "Paired with `end.jsonl`" in report
    # no table that needs MAJ: a missing method is not an accuracy of 0
    assert not {"main_table.md", "paired.md", "m_scaling.md", "paper_beside.md"} & written
    assert {"answer_rates.md", "openers.md", "final_speaker.md", "policies.md"} <= written
    rates = (tmp_path / "rr" / "answer_rates.md").read_text()
    assert "| RRMaj |" in rates and "| MAJ |" not in rates
    # the run that decoded both keeps its full report
    full = {p.name for p in write_report(base, tmp_path / "both", png=False)}
    assert {"main_table.md", "paired.md", "m_scaling.md"} <= full
