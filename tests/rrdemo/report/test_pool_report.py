"""Several logs pooled from the shell and from a study of kind pool: the committed evidence logs
in, the pool's table and forest plot out; bad input refused with one line naming what is allowed."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pytest

from rrdemo.cli import main as cli_main
from rrdemo.errors import RRError
from rrdemo.report.paired import paired_rows
from rrdemo.report.pool_report import pool_logs
from rrdemo.runs.log import read_log
from rrdemo.study.file import load_study

ROOT = Path(__file__).resolve().parents[3]
AQUA = ROOT / "assets" / "evidence_aqua" / "log.jsonl"
ARITH2 = ROOT / "assets" / "evidence" / "log.jsonl"
PASS = ROOT / "assets" / "evidence_pass" / "log.jsonl"


def test_each_run_in_the_pool_is_its_own_reports_row() -> None:
    pool = pool_logs([AQUA, ARITH2, PASS], "3c2t")
    own = {r.label: r for r in paired_rows(read_log(AQUA))}["3c2t"]
    aqua = pool.runs[0].estimate
    assert (aqua.delta, aqua.lo, aqua.hi, aqua.maj_only, aqua.rrmaj_only) == (
        own.delta, own.delta_lo, own.delta_hi, own.maj_only, own.rrmaj_only
    )  # fmt: skip
    assert pool.pooled_names == ("evidence_aqua", "evidence")
    assert pool.runs[2].left_out == "shares 40 of its 40 questions with evidence"
    assert pool.pooled.questions == 160


def test_report_pools_logs_from_the_shell(tmp_path, capsys) -> None:
    out = tmp_path / "pool"
    args = ["report", str(AQUA), str(ARITH2), "--pool", "3c2t", "--out", str(out), "--no-png"]
    assert cli_main(args) == 0
    listed = {Path(line).name for line in capsys.readouterr().out.splitlines()}
    assert listed == {"pooled.md", "pooled.csv", "forest.html", "figures.txt"}
    with (out / "pooled.csv").open(encoding="utf-8") as f:
        rows = {r["run"]: r for r in csv.DictReader(f)}
    assert int(rows["pooled"]["questions"]) == 160 and rows["pooled"]["boot"] == "10000"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([str(AQUA), str(ARITH2)], "add --pool CONFIG"),
        ([str(PASS), "--pool", "3c2t"], "give the run it varies too"),
        ([str(AQUA), str(ARITH2), "--pool", "2c3t"], "no condition at 2c3t"),
    ],
)
def test_bad_pool_requests_are_one_line(args, says, tmp_path, capsys) -> None:
    assert cli_main(["report", *args, "--out", str(tmp_path / "o"), "--no-png"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and not (tmp_path / "o").exists()


def _study(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pool" / "study.yaml"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("settings: {config: 3c2t, logs: [a/log.jsonl]}\npublish: {report: r}", "at least two"),
        ("settings: {config: three, logs: [a.jsonl, b.jsonl]}\npublish: {report: r}", "like 3c2t"),
        ("settings: {config: 3c2t, logs: [a.jsonl, b.jsonl]}\npublish: {board: x}", "report only"),
        ("settings: {config: 3c2t, logs: [a.jsonl, b.jsonl], n: 3}\npublish: {report: r}", "n"),
    ],
)
def test_a_pool_study_file_is_checked(body, says, tmp_path) -> None:
    with pytest.raises(RRError, match=says):
        load_study(_study(tmp_path, "kind: pool\n" + body))


def test_a_pool_study_builds_from_its_logs_and_runs_nothing(tmp_path, capsys) -> None:
    for name in ("evidence_aqua", "evidence"):
        (tmp_path / name).mkdir()
        shutil.copy(ROOT / "assets" / name / "log.jsonl", tmp_path / name / "log.jsonl")
    path = _study(
        tmp_path,
        "kind: pool\nsettings: {config: 3c2t, logs: [../evidence_aqua/log.jsonl, "
        "../evidence/log.jsonl]}\npublish: {report: report}\n",
    )
    assert cli_main(["study", str(path), "run"]) == 2
    assert "runs nothing" in capsys.readouterr().err
    from rrdemo.study.build import build

    build(load_study(path), png=False)
    assert (path.parent / "report" / "pooled.md").is_file()
