"""`rrdemo reextract` (rrdemo.runs.reextract) on the shipped logs: a replay concludes every unit exactly as the run did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from rrdemo.calibration.reextract import reextract_calibration
from rrdemo.cli import main
from rrdemo.errors import RRError
from rrdemo.runs.log import read_run
from rrdemo.runs.reextract import logged_question, reextract
from rrdemo.tasks import get_task

ROOT = Path(__file__).resolve().parents[3]


def _changes(path: Path) -> tuple[int, int]:
    tallies, _ = reextract(path)
    return (
        sum(t["changed"] for t in tallies.values()),
        sum(t["decision_changed"] for t in tallies.values()),
    )


SHIPPED_RUNS = (
    "experiment_small.jsonl",
    "experiment_small_shuffled.jsonl",
    "adversary_replay.jsonl",
    "meter05b/log.jsonl",
    "qwen15b/log.jsonl",
    "evidence/log.jsonl",
    "evidence/log-1-of-2.jsonl",
    "evidence/log-2-of-2.jsonl",
    "evidence_aqua/log.jsonl",
)
SHIPPED_CALIBRATIONS = (
    "qwen15b.jsonl", "qwen05b.jsonl", "qwen15b_arith.jsonl", "qwen15b_styles.jsonl"
)  # fmt: skip


def test_the_shipped_logs_hold_what_the_current_rules_read() -> None:
    for name in SHIPPED_RUNS:
        assert _changes(ROOT / "assets" / name) == (0, 0), name
    for name in SHIPPED_CALIBRATIONS:
        tallies, _ = reextract_calibration(ROOT / "assets" / "calibration" / name)
        assert sum(t["changed"] for t in tallies.values()) == 0, name


def test_a_letter_answer_is_read_with_its_question_options() -> None:
    """The arith2 evidence log holds answers that state an option's value, no letter
    ("\\boxed{22}" under "(A) 22"): read with the question they are that option, without it none."""
    task = get_task("arith2")
    records = [json.loads(line) for line in (ROOT / "assets/evidence/log.jsonl").open()]
    done = {(r["condition"], r["question_id"]): r for r in records if r["type"] == "done"}
    named = [
        r for r in records
        if r["type"] == "trajectory" and r["answer"]
        and task.extract(_text(r), r["finish_reason"]) is None
    ]  # fmt: skip
    assert len(named) == 12
    for record in named:
        question = logged_question(
            "arith2", done[(record["condition"], record["question_id"])], "auto"
        )
        assert "Options:" in question.text and question.gold == record["gold"]
        assert task.for_question(question).extract(_text(record), "eos") == record["answer"]


def _text(record: dict) -> str:
    return "".join(chunk["text"] for chunk in record["chunks"])


def test_a_question_missing_from_the_data_is_refused() -> None:
    done = {"question_id": "aqua-99999", "gold": "(A)"}
    with pytest.raises(RRError, match="aqua-99999"):
        logged_question("aqua", done, "offline")
    assert logged_question("custom", {"question_id": "custom-1", "gold": None}, None).text == ""


def test_write_rereads_a_calibration_log(tmp_path, capsys) -> None:
    log = tmp_path / "calibration.jsonl"
    shutil.copy(ROOT / "assets/calibration/qwen15b.jsonl", log)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    stale = next(r for r in records[1:] if r["answer"] and r["correct"])
    stale["answer"], stale["correct"] = None, False
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["reextract", str(log)]) == 0
    assert "| all | 360 | 1 | 0 | 1 | 0 |" in capsys.readouterr().out
    assert main(["reextract", str(log), "--write"]) == 0
    rewritten = [json.loads(line) for line in log.read_text().splitlines()]
    assert rewritten[0] == records[0] and len(rewritten) == len(records)
    again = next(r for r in rewritten[1:] if r["question_id"] == stale["question_id"]
                 and r["cell"] == stale["cell"])  # fmt: skip
    assert again["answer"] is not None and again["correct"]
    tallies, _ = reextract_calibration(log)
    assert sum(t["changed"] for t in tallies.values()) == 0


def test_write_replaces_answers_and_votes_and_keeps_the_rest(tmp_path) -> None:
    log = tmp_path / "log.jsonl"
    shutil.copy(ROOT / "assets" / "experiment_small.jsonl", log)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    trajectory = next(r for r in records if r["type"] == "trajectory" and r["answer"])
    trajectory["answer"], trajectory["vote_key"] = "(Z)", "(Z)"  # a stale answer
    done = next(r for r in records if r["type"] == "done")
    done["votes"]["MAJ"]["answer"] = "(Z)"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert _changes(log) == (1, 1)
    assert main(["reextract", str(log), "--write"]) == 0
    assert _changes(log) == (0, 0)
    rewritten = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["type"] for r in rewritten] == [r["type"] for r in records]
    assert rewritten[0] == records[0]
    assert read_run(log).units == 64
