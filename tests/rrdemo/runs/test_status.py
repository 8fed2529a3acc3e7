"""`rrdemo status LOG` (rrdemo.runs.status) on the committed logs: done of planned per condition,
failures with their reason, tokens and time, a unit the run stopped in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rrdemo.cli import main
from rrdemo.runs.log import read_log
from rrdemo.runs.status import CUT_AT_L, NO_STATEMENT, log_status
from tests.support.fakes import split_log

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "assets" / "experiment_small.jsonl"  # finished: 8 conditions x 8 questions
PARTIAL = ROOT / "assets" / "qwen15b" / "log.jsonl"  # a sweep under way


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_finished_log_counts_what_its_records_hold() -> None:
    records = _records(SMALL)
    statuses = log_status(read_log(SMALL))
    assert [(s.label, s.done, s.planned, s.left) for s in statuses[:4]] == [
        ("0c5t", 8, 8, 0),
        ("1c4t", 8, 8, 0),
        ("3c2t", 8, 8, 0),
        ("5c0t", 8, 8, 0),
    ]
    done = [r for r in records if r["type"] == "done"]
    assert sum(s.decode_tokens for s in statuses) == sum(
        c["decode_tokens"] for r in done for c in r["compute"].values()
    )
    assert sum(s.prefill_tokens for s in statuses) == sum(
        c["prefill_tokens"] for r in done for c in r["compute"].values()
    )
    trajectories = [r for r in records if r["type"] == "trajectory"]
    for status in statuses:
        mine = [r for r in trajectories if r["condition"] == status.key]
        cut = [r for r in mine if r["vote_key"] is None and r["finish_reason"] == "length"]
        bare = [r for r in mine if r["vote_key"] is None and r["finish_reason"] != "length"]
        assert sum(n for (_, why), n in status.unanswered.items() if why == CUT_AT_L) == len(cut)
        assert sum(n for (_, why), n in status.unanswered.items() if why == NO_STATEMENT) == len(
            bare
        )
        assert sum(status.trajectories.values()) == len(mine) == 80
        assert status.stopped == []


def test_a_partial_sweep_shows_what_is_left() -> None:
    log = read_log(PARTIAL)
    statuses = log_status(log)
    assert len(statuses) == len(log.conditions)
    assert sum(s.done for s in statuses) == len(log.done)
    assert all(s.planned == len(log.conditions[s.key]["questions"]) for s in statuses)
    assert sum(s.left for s in statuses) > 0  # the committed sweep is partial
    assert all(s.wall_s > 0 and s.decode_tokens > 0 for s in statuses if s.done)


def test_a_unit_the_run_stopped_in_is_named_and_not_counted(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    lines = SMALL.read_text(encoding="utf-8").splitlines(keepends=True)
    last_done = max(i for i, line in enumerate(lines) if '"type":"done"' in line)
    # the last unit's trajectories stay, its done record is gone, and a write was cut short
    log.write_text("".join(lines[:last_done]) + '{"type":"traj', encoding="utf-8")
    stopped_unit = json.loads(lines[last_done])
    statuses = {s.key: s for s in log_status(read_log(log))}
    status = statuses[stopped_unit["condition"]]
    assert status.stopped == [stopped_unit["question_id"]]
    assert (status.done, status.left) == (7, 1)
    assert any("1 question(s) stopped before their end" in line for line in status.failures())


def test_the_command_prints_a_table_or_json_lines(tmp_path: Path, capsys) -> None:
    assert main(["status", str(SMALL)]) == 0
    out = capsys.readouterr().out
    assert "gsm8k smollm2 3c2t strong K=32 M=5 L=128" in out
    assert "all 8 conditions" in out and "without an answer: cut off at L = 128" in out
    assert main(["status", str(SMALL), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["done"], r["planned"]) for r in rows] == [(8, 8)] * 8
    assert all(isinstance(r["failures"], list) for r in rows)


def test_a_file_that_is_no_log_gets_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    other = tmp_path / "notes.jsonl"
    other.write_text('{"hello": 1}\n')
    assert main(["status", str(other)]) == 2
    assert "is not an rrdemo experiment log" in capsys.readouterr().err
    copy = Path(shutil.copy(SMALL, tmp_path / "small.jsonl"))
    assert main(["status", str(copy)]) == 0


def _split(tmp_path: Path) -> list[Path]:
    """The committed log's units dealt alternately into two shard logs with the same header."""
    return split_log(SMALL, [tmp_path / "log-1-of-2.jsonl", tmp_path / "log-2-of-2.jsonl"])


def test_the_shards_of_one_sweep_are_read_as_one_run(tmp_path: Path, capsys) -> None:
    a, b = _split(tmp_path)
    # the second shard stopped inside a unit: one trajectory record of a unit it never finished
    unfinished = next(r for r in _records(SMALL) if r.get("type") == "trajectory")
    with b.open("a", encoding="utf-8") as out:
        out.write(json.dumps({**unfinished, "question_id": "gsm8k-unfinished"}) + "\n")
    alone = {s.key: s.done for s in log_status(read_log(a))}
    assert sum(alone.values()) == 32  # one shard alone: half the plan looks left
    assert main(["status", str(a), str(b), "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["done"], r["planned"]) for r in rows] == [(8, 8)] * 8
    stopped = [r for r in rows if r["stopped"]]
    assert [(r["key"], r["stopped"]) for r in stopped] == [
        (unfinished["condition"], ["gsm8k-unfinished"])
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == [a.name, b.name]  # nothing written


def test_logs_of_different_sweeps_are_not_read_as_one(tmp_path: Path, capsys) -> None:
    a, _ = _split(tmp_path)
    other = ROOT / "assets" / "experiment_small_shuffled.jsonl"
    assert main(["status", str(a), str(other)]) == 2
    assert "holds a different sweep" in capsys.readouterr().err
