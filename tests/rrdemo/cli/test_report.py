"""`rrdemo report`: the report of a run log written to a folder, every file listed on stdout."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrdemo.cli import main as cli_main
from tests.support.fakes import fake_run


@pytest.fixture
def log(tmp_path) -> Path:
    return fake_run(tmp_path / "run.jsonl")


def test_every_written_file_is_listed_and_no_png_is_drawn_when_asked(log, tmp_path, capsys):
    out = tmp_path / "mine"
    assert cli_main(["report", str(log), "--out", str(out), "--no-png"]) == 0
    printed, err = capsys.readouterr()
    listed = {Path(line) for line in printed.splitlines()}
    assert listed == set(out.iterdir()) and out / "report.md" in listed
    assert not any(p.suffix == ".png" for p in listed) and err == ""


def test_without_out_the_report_goes_beside_the_log(log, capsys):
    assert cli_main(["report", str(log), "--no-png"]) == 0
    printed, err = capsys.readouterr()
    folder = log.with_name("run_report")
    assert {Path(line).parent for line in printed.splitlines()} == {folder}
    assert (folder / "main_table.md").is_file() and "beside the log" in err


def test_a_file_that_is_no_run_log_is_one_line_and_nothing_is_written(tmp_path, capsys):
    notes = tmp_path / "notes.jsonl"
    notes.write_text("hello\n")
    assert cli_main(["report", str(notes), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rrdemo report: error:")
    assert not (tmp_path / "out").exists()
