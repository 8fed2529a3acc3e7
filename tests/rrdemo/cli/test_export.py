"""`rrdemo export`: a run's leaderboard submission, validated before it is written, written whole."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rrdemo.cli import main as cli_main
from tests.support.fakes import fake_plan, fake_run

LABELS = ("0c3t", "1c2t", "2c1t", "3c0t")


@pytest.fixture
def log(tmp_path) -> Path:
    return fake_run(tmp_path / "run.jsonl", LABELS)


@pytest.fixture
def logic3_log(tmp_path) -> Path:
    """A scripted run under a benchmark's name (a submission names its dataset)."""
    return fake_run(tmp_path / "logic3.jsonl", LABELS, task_name="logic3")


def test_export_writes_a_submission_the_leaderboard_accepts(logic3_log, tmp_path, capsys):
    from leaderboard.cli import main as leaderboard_main

    out = tmp_path / "submission.json"
    assert cli_main(["export", str(logic3_log), "--submitter", "tester", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["source"] == "local_run" and data["submitter"] == "tester"
    assert {(r["n_corrupted"], r["n_honest"]) for r in data["results"]} == {
        (int(label[0]), int(label[2])) for label in LABELS
    }
    plan = fake_plan(LABELS, task_name="logic3")  # what fake_run logged
    m = {c.config.resolved_m for c in plan.conditions}
    for r in data["results"]:
        assert r["corrupted_agents"] == list(range(r["n_corrupted"]))
        assert {r["m"]} == m and r["n_questions"] == len(plan.conditions[0].questions)
    capsys.readouterr()
    assert leaderboard_main(["submit", str(out)]) == 0, capsys.readouterr().err


def test_export_keeps_an_existing_file_and_refuses_foreign_logs(log, tmp_path, capsys):
    out = tmp_path / "submission.json"
    out.write_text("keep me")
    assert cli_main(["export", str(log), "--submitter", "x", "--out", str(out)]) == 2
    assert out.read_text() == "keep me"
    assert "already exists" in capsys.readouterr().err
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text('{"a": 1}\n')
    fresh = tmp_path / "fresh.json"
    assert cli_main(["export", str(foreign), "--submitter", "x", "--out", str(fresh)]) == 2
    assert not fresh.exists()
    assert cli_main(["export", str(log), "--submitter", "x", "--out", str(fresh)]) == 2
    assert "unknown dataset" in capsys.readouterr().err and not fresh.exists()  # task "fake"
    assert cli_main(["export", str(log), "--submitter", "   ", "--out", str(fresh)]) == 2
    assert "submitter" in capsys.readouterr().err and not fresh.exists()


def test_without_out_the_file_goes_beside_the_log_and_force_replaces_it(logic3_log, capsys):
    beside = logic3_log.with_name("logic3.submission.json")
    assert cli_main(["export", str(logic3_log), "--submitter", "first"]) == 0
    assert capsys.readouterr().out.strip() == str(beside)
    assert cli_main(["export", str(logic3_log), "--submitter", "second"]) == 2
    assert json.loads(beside.read_text())["submitter"] == "first"
    argv = ["export", str(logic3_log), "--submitter", "second", "--force", "--source", "rrdemo"]
    assert cli_main(argv) == 0
    data = json.loads(beside.read_text())
    assert (data["submitter"], data["source"]) == ("second", "rrdemo")
    assert sorted(p.name for p in logic3_log.parent.iterdir()) == [
        "logic3.jsonl",
        "logic3.submission.json",
    ]  # no temporary file left behind


def test_a_run_under_way_is_not_exported_as_the_projects_own_rows(logic3_log, tmp_path, capsys):
    """Rows with source rrdemo are seeded into every board: a run with units left is refused
    (nothing written), while the same partial run still exports as a local run."""
    header, *records = logic3_log.read_text(encoding="utf-8").splitlines(keepends=True)
    last_done = max(i for i, line in enumerate(records) if json.loads(line)["type"] == "done")
    partial = tmp_path / "partial" / "logic3.jsonl"
    partial.parent.mkdir()
    partial.write_text(header + "".join(records[:last_done]), encoding="utf-8")
    out = tmp_path / "partial" / "submission.json"
    argv = ["export", str(partial), "--submitter", "rrdemo", "--out", str(out)]
    assert cli_main([*argv, "--source", "rrdemo"]) == 2
    err = capsys.readouterr().err
    assert "is not finished" in err and "units done" in err and "Traceback" not in err
    assert not out.exists() and sorted(p.name for p in partial.parent.iterdir()) == [partial.name]
    assert cli_main(argv) == 0  # local_run: the rows say how many questions they rest on
    assert json.loads(out.read_text())["source"] == "local_run"


def test_created_dates_the_submission_whatever_the_logs_file_time(logic3_log, tmp_path, capsys):
    """A checkout gives a log today's file time; --created keeps the day the run finished, so
    exporting a committed run again gives the committed file. A bad date writes nothing."""
    out = tmp_path / "submission.json"
    argv = ["export", str(logic3_log), "--submitter", "x", "--out", str(out), "--force"]
    os.utime(logic3_log, (1_760_000_000, 1_760_000_000))  # a date the board accepts (2025 on)
    assert cli_main(argv) == 0
    assert json.loads(out.read_text())["created"].startswith("2025-10-09T08:53:20")
    first = None
    for stamp in (1_800_000_000, 1_900_000_000):  # the file's time moves, the date does not
        os.utime(logic3_log, (stamp, stamp))
        assert cli_main([*argv, "--created", "2026-11-26"]) == 0
        text = out.read_text()
        assert json.loads(text)["created"].startswith("2026-11-26T00:00:00")
        assert first in (None, text)
        first = text
    capsys.readouterr()
    for bad in ("26/11/2026", "2026-11-26T09:00:00+02:00"):
        with pytest.raises(SystemExit):
            cli_main([*argv, "--created", bad])
        err = capsys.readouterr().err
        assert "--created" in err and ("YYYY-MM-DD" in err or "UTC" in err)
        assert out.read_text() == first
