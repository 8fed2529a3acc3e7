"""`rrdemo calibrate`: bad input exits 2 with one line and writes nothing; a dry run lists the
cells; a run writes the log and its report (table, CSV, plot); `--report` remakes the report."""

from __future__ import annotations

import pytest

from rrdemo.cli import main


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--injections", "loud"], "unknown injection 'loud'"),
        (["--n", "0"], "n (questions per task) must be at least 1"),
        (["--batch", "0"], "--batch must be at least 1"),
        (["--shard", "3/2"], "--shard 3/2: I must be between 1 and N"),
        (["--shard", "half"], "--shard takes I/N, e.g. 1/2"),
        (["--flow", "--backend", "transformers"], "flow (continuous batching) needs every model"),
        ([], None),  # the --out below is a folder
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, capsys, argv, words) -> None:
    out = tmp_path if words is None else tmp_path / "c.jsonl"
    code = main(["calibrate", "--models", "smollm2", "--tasks", "logic3", *argv, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("rrdemo calibrate: error: ")
    assert (words or "is a folder") in err
    assert list(tmp_path.iterdir()) == []


def test_without_out_or_report_it_says_what_to_give(capsys) -> None:
    assert main(["calibrate"]) == 2
    assert "give --out LOG" in capsys.readouterr().err


def test_dry_run_lists_every_cell(tmp_path, capsys) -> None:
    argv = ["calibrate", "--models", "smollm2", "--tasks", "logic3,aqua", "--n", "3"]
    assert (
        main(
            [
                *argv,
                "--styles",
                "direct,step-by-step",
                "--dry-run",
                "--out",
                str(tmp_path / "c.jsonl"),
            ]
        )
        == 0
    )
    out = capsys.readouterr()
    assert len(out.out.splitlines()) == 2 * 2 * 3
    assert "12 cells, 36 answers" in out.err
    assert not (tmp_path / "c.jsonl").exists()


@pytest.mark.slow
def test_a_run_writes_the_log_and_its_report(tmp_path, capsys) -> None:
    out = tmp_path / "c.jsonl"
    argv = [
        "calibrate",
        "--models",
        "smollm2",
        "--tasks",
        "logic3",
        "--n",
        "2",
        "--max-tokens",
        "8",
    ]
    assert main([*argv, "--quiet", "--out", str(out)]) == 0
    report = tmp_path / "c_report"
    md = (report / "calibration.md").read_text()
    assert "| smollm2 | logic3 | direct |" in md and "qualifies" in md
    assert (report / "calibration.csv").read_text().count("\n") == 1 + 3
    assert (report / "calibration.html").stat().st_size > 0
    (report / "calibration.md").unlink()
    assert main(["calibrate", "--report", str(out)]) == 0
    assert (report / "calibration.md").read_text() == md


def test_a_dry_run_counts_only_the_answers_left(tmp_path, capsys) -> None:
    from rrdemo.calibration.plan import plan_calibration
    from rrdemo.calibration.runner import run_calibration
    from rrdemo.cli import build_parser
    from rrdemo.cli.calibrate import _SETTINGS
    from tests.support.fakes import FakeBackend, FakePool, obeys_injection

    out = tmp_path / "c.jsonl"
    argv = ["calibrate", "--models", "smollm2", "--tasks", "logic3", "--n", "2"]
    argv += ["--max-tokens", "8", "--out", str(out)]
    args = build_parser().parse_args(argv)
    plan = plan_calibration({k: getattr(args, k) for k in _SETTINGS})
    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    run_calibration(plan, out, pool, progress=False, shard=(1, 2))
    assert main([*argv, "--dry-run"]) == 0
    assert "6 answers" in (err := capsys.readouterr().err) and "3 already in" in err
    assert ", 3 left" in err
    run_calibration(plan, out, pool, progress=False)
    assert main([*argv, "--dry-run"]) == 0
    assert "6 already in" in (err := capsys.readouterr().err) and ", 0 left" in err
