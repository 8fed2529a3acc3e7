"""The Arena's chooser and result line: every setting is named by its condition and what its
committed run measured, "rescue" only where the run's paired interval lies above 0, and a new
run joins the chooser by an entry in the manifest."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

from rrdemo.gallery import (
    MIN_VERDICT_QUESTIONS,
    TOO_FEW,
    CellOutcome,
    GallerySetting,
    cached_log,
    load_gallery,
    question_cell,
)
from rrdemo.report.paired import PairedRow, paired_by_condition
from rrdemo.report.render import pct
from rrdemo.runs.log import read_log
from tests.support.fakes import fake_run
from ui.arena_chooser import group_choices, question_choices, setting_choices, shelf_choices
from ui.render import live_result_line, result_line

CLAIMS = ("Trap and rescue", "Robustness tax")  # the paper's claims, never a setting's name


def committed_interval(setting: GallerySetting) -> tuple[float, float, float]:
    """(delta, lo, hi) of the setting's condition: from the committed report's paired.csv
    (policies.csv for a run of RRMaj alone, against the MAJ of the run it varies) beside its
    log when there is one, else from the log by the paired analysis."""
    condition = cached_log(setting.log).conditions[setting.condition]
    report = setting.log.parent / "report" / "paired.csv"
    if report.exists():
        with report.open(encoding="utf-8") as f:
            for row in csv.DictReader(f):
                key = (row["task"], row["label"], row["strength"], row["ensemble"])
                wanted = ("task", "label", "strength", "ensemble")
                if key == tuple(condition[k] for k in wanted):
                    return float(row["delta"]), float(row["delta_lo"]), float(row["delta_hi"])
    if (setting.log.parent / "report" / "policies.csv").exists():  # RRMaj alone, paired
        with (setting.log.parent / "report" / "policies.csv").open(encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if (row["task"], row["label"]) == (condition["task"], condition["label"]):
                    keys = ("other_vs_maj_delta", "other_vs_maj_lo", "other_vs_maj_hi")
                    return tuple(float(row[k]) for k in keys)  # type: ignore[return-value]
    row = paired_by_condition(read_log(setting.log))[setting.condition]
    return row.delta, row.delta_lo, row.delta_hi


def claims_rescue(label: str) -> bool:
    """A label claims a rescue when it says "rescue" other than as "no rescue"."""
    return "rescue" in label.replace("no rescue", "")


def test_every_setting_is_named_by_its_setting_and_its_committed_outcome() -> None:
    gallery = load_gallery()
    rescues = 0
    for setting in gallery.settings:
        label = setting.label()
        assert not any(claim in label for claim in CLAIMS), label
        delta, lo, hi = committed_interval(setting)
        interval = f"{pct(delta, True)} [{pct(lo, True)}, {pct(hi, True)}]"
        if TOO_FEW in label:  # no verdict, and no interval to read one into
            assert setting.outcome().row.questions < MIN_VERDICT_QUESTIONS, label
            continue
        assert interval in label, (label, interval)  # the committed numbers, not typed ones
        if claims_rescue(label):
            assert lo > 0, label
            rescues += 1
        config = cached_log(setting.log).conditions[setting.condition]["config"]
        corrupted = sum(a["corrupted"] for a in config["agents"])
        if lo > 0 and len(config["agents"]) / 2 < corrupted < len(config["agents"]):
            assert claims_rescue(label), label  # a measured rescue is said, too
    assert "moderate 3c2t · qwen2.5-coder-1.5b · AQuA: no rescue" in gallery.settings[0].label()
    # the shelved SmolLM2 run's 3c2t lead has an interval above 0: it says so, on the shelf
    assert rescues == sum(1 for s in gallery.settings if s.shelf and claims_rescue(s.label()))


def _row(lo: float, hi: float) -> PairedRow:
    return PairedRow("t", "x", "strong", "m", 40, 0.2, 0.3, (lo + hi) / 2, lo, hi, 4, 8, 0.5)


def test_a_difference_counts_only_when_its_interval_excludes_zero() -> None:
    trap, minority, floor = (3, 5), (1, 5), (5, 5)
    assert CellOutcome(_row(0.05, 0.3), *trap).finding == "rescue"
    assert CellOutcome(_row(0.0, 0.3), *trap).finding == "no rescue"  # touching 0 is not above
    assert CellOutcome(_row(-0.2, -0.05), *trap).finding == "RRMaj behind"
    assert CellOutcome(_row(0.05, 0.3), *minority).finding == "RRMaj ahead"
    assert CellOutcome(_row(0.05, 0.3), *floor).finding == "RRMaj ahead"  # nobody to rescue
    assert CellOutcome(_row(-0.1, 0.1), *minority).finding == "no difference shown"


def test_a_run_of_few_questions_gets_no_verdict() -> None:
    few = replace(_row(0.05, 0.3), questions=MIN_VERDICT_QUESTIONS - 1)
    assert CellOutcome(few, 3, 5).finding == "too few questions for a verdict"
    assert CellOutcome(few, 3, 5).short() == f"{few.questions} questions, {TOO_FEW}"
    enough = replace(few, questions=MIN_VERDICT_QUESTIONS)
    assert CellOutcome(enough, 3, 5).finding == "rescue"
    gallery = load_gallery()
    styles = next(s for s in gallery.settings if s.name.startswith("step-by-step"))
    assert styles.label().endswith(f"3 questions, {TOO_FEW}"), styles.label()


def test_the_result_line_counts_the_whole_run_from_its_log() -> None:
    gallery = load_gallery()
    setting = gallery.settings[0]
    qid = setting.questions[0]
    unit = setting.unit(qid)
    # the four cells counted here from the log's decisions, apart from the paired analysis
    cells = {"both right": 0, "RRMaj alone right": 0, "MAJ alone right": 0, "both wrong": 0}
    for record in read_log(setting.log).finished_units():
        if record["condition"] == setting.condition:
            maj, rr = (bool(record["votes"][m]["correct"]) for m in ("MAJ", "RRMaj"))
            cells[{(1, 1): "both right", (0, 1): "RRMaj alone right", (1, 0): "MAJ alone right",
                   (0, 0): "both wrong"}[(maj, rr)]] += 1  # fmt: skip
    total = sum(cells.values())
    line = result_line(setting.outcome(), question_cell(unit), unit)
    assert f"{total} questions" in line
    assert (
        f"RRMaj alone right on {cells['RRMaj alone right']} of {total}, MAJ alone on "
        f"{cells['MAJ alone right']}, both right on {cells['both right']}, both wrong on "
        f"{cells['both wrong']}"
    ) in line
    votes = unit.done["votes"]
    mine = {(1, 1): "both", (0, 1): "RRMaj alone", (1, 0): "MAJ alone", (0, 0): "both"}
    assert (
        f"<b>{qid}</b> is one {mine[(votes['MAJ']['correct'], votes['RRMaj']['correct'])]}" in line
    )
    assert "samples anew" in live_result_line()  # a live run is never the recording again


def test_the_chooser_groups_current_runs_and_keeps_old_ones_aside() -> None:
    gallery = load_gallery()
    groups = group_choices(gallery)
    assert 1 <= len(groups) <= 5 and all("smollm2" not in g for g in groups)
    shelved = shelf_choices(gallery)
    assert len(shelved) == sum(1 for s in gallery.settings if s.shelf) > 0
    assert all("old prompt" in label or "SmolLM2" in label for label, _ in shelved)
    for indices in gallery.groups().values():
        assert len(setting_choices(gallery, indices)) <= 8  # a handful per group
        for i in indices:
            choices = question_choices(gallery, i)
            assert [v for _, v in choices] == [f"{i}/{q}" for q in gallery.settings[i].questions]


def test_a_new_run_joins_the_chooser_by_its_manifest_entry(tmp_path: Path) -> None:
    log_path = fake_run(tmp_path / "new.jsonl")
    key = next(iter(read_log(log_path).conditions))
    manifest = tmp_path / "gallery.json"
    setting = {"name": "2c1t", "description": "d", "log": "new.jsonl", "condition": key}
    manifest.write_text(
        json.dumps(
            {
                "rule": "the first 2",
                "logs": {"new.jsonl": {"recorded": "2026-12-01"}},
                "settings": [
                    {**setting, "questions": read_log(log_path).conditions[key]["questions"][:2]}
                ],
            }
        )
    )
    gallery = load_gallery(manifest)
    (group,) = group_choices(gallery)
    ((label, value),) = setting_choices(gallery, gallery.groups()[group])
    outcome = gallery.settings[0].outcome()
    assert value == "0" and label == f"2c1t: {outcome.short()}"
