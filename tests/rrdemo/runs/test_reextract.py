"""`rrdemo reextract` (rrdemo.runs.reextract) on the shipped logs: a replay concludes every unit exactly as the run did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rrdemo.cli import main
from rrdemo.runs.log import read_run
from rrdemo.runs.reextract import reextract

ROOT = Path(__file__).resolve().parents[3]


def _changes(path: Path) -> tuple[int, int]:
    tallies, _ = reextract(path)
    return (
        sum(t["changed"] for t in tallies.values()),
        sum(t["decision_changed"] for t in tallies.values()),
    )


def test_the_shipped_logs_hold_what_the_current_rules_read() -> None:
    for name in ("experiment_small.jsonl", "experiment_small_shuffled.jsonl"):
        assert _changes(ROOT / "assets" / name) == (0, 0), name


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
