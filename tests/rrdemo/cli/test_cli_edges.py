"""What a user meets at the edges of the command line: one option name per list, an empty list
refused, a reader that leaves early, a log or calibration that does not fit the sweep, a server
that is not there, a question index out of range. Each is refused or said before anything is
written, in one line, without a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rrdemo.cli import build_parser, main
from tests.support.model_list import model_list_server
from tests.support.served import free_port

ROOT = Path(__file__).resolve().parents[3]
LOG = ROOT / "assets" / "experiment_small_shuffled.jsonl"  # a committed run log
ARITH_CALIBRATION = ROOT / "assets" / "calibration" / "qwen15b_arith.jsonl"  # qwen2.5-coder-1.5b


def _experiment(tmp_path: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["experiment", *args, "--dry-run", "--out", str(tmp_path / "r.jsonl")])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_experiment_takes_models_like_run_and_calibrate_and_keeps_model_as_its_alias() -> None:
    parser = build_parser()
    for spelling in ("--models", "--model"):
        args = parser.parse_args(
            ["experiment", "--out", "r.jsonl", spelling, "smollm2,gemma3-270m"]
        )
        assert args.models == "smollm2,gemma3-270m"
    for command in ("run", "calibrate"):
        assert parser.parse_args([command, "--models", "smollm2"]).models == "smollm2"


@pytest.mark.parametrize(
    "flag",
    ["--configs", "--models", "--tasks", "--strengths", "--k", "--n-by-config", "--calibration",
     "--adversaries", "--turn-policies"],
)  # fmt: skip
def test_an_empty_list_is_refused_not_read_as_the_default(tmp_path, capsys, flag) -> None:
    code, out, err = _experiment(tmp_path, capsys, "--tasks", "logic3", "--n", "1", flag, " , ")
    assert code == 2 and out == ""
    assert "empty" in err and "Traceback" not in err
    assert not (tmp_path / "r.jsonl").exists()


def test_empty_lists_of_run_and_calibrate_are_refused(tmp_path, capsys) -> None:
    cases = [
        ["run", "--task", "logic3", "--corrupt-seats", ""],
        ["run", "--task", "logic3", "--models", ""],
        ["calibrate", "--dry-run", "--out", str(tmp_path / "c.jsonl"), "--models", ""],
        ["calibrate", "--dry-run", "--out", str(tmp_path / "c.jsonl"), "--injections", ","],
    ]
    for args in cases:
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("empty" in err or "at least one" in err), err
    assert not (tmp_path / "c.jsonl").exists()


def _closed_pipe_run(*args: str) -> subprocess.CompletedProcess[str]:
    """Run rrdemo with its stdout a pipe nobody reads any more (`... | head` once head exits)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "rrdemo", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize("command", ["status", "replay"])
def test_a_reader_that_left_ends_the_command_quietly(command) -> None:
    done = _closed_pipe_run(command, str(LOG))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_an_unknown_sweep_key_lists_endpoints_among_the_allowed(tmp_path, capsys) -> None:
    sweep = tmp_path / "s.yaml"
    sweep.write_text("endpoint: {}\n")
    code, _, err = _experiment(tmp_path, capsys, "--sweep", str(sweep))
    assert code == 2 and "unknown sweep setting(s): endpoint;" in err
    assert "endpoints" in err.split("allowed:")[1]


def test_a_dry_run_refuses_an_out_that_holds_another_sweep(tmp_path, capsys) -> None:
    from rrdemo.cli.experiment import sweep_from_args
    from rrdemo.runs.spec import plan_sweep
    from rrdemo.runs.write import open_log

    out = tmp_path / "r.jsonl"
    settings = ["--tasks", "logic3", "--models", "smollm2", "--strengths", "strong", "--n", "2"]
    args = build_parser().parse_args(
        ["experiment", *settings, "--configs", "3c2t", "--out", str(out)]
    )
    writer, _ = open_log(out, plan_sweep(sweep_from_args(args)))  # a sweep begun: its header
    writer.close()
    before = out.read_bytes()
    code, _, err = _experiment(tmp_path, capsys, *settings, "--configs", "3c2t")
    assert code == 0, err  # the same sweep: it would resume
    code, _, err = _experiment(tmp_path, capsys, *settings, "--configs", "0c5t")
    assert code == 2 and "holds a different sweep (configs" in err
    assert out.read_bytes() == before


def test_a_calibration_of_another_model_is_said_and_of_the_same_is_not(tmp_path, capsys) -> None:
    held_out = ["--tasks", "arith4", "--configs", "3c2t", "--n", "4", "--strengths", "strong"]
    held_out += ["--calibration", str(ARITH_CALIBRATION)]
    code, _, err = _experiment(tmp_path, capsys, *held_out, "--models", "smollm2")
    assert code == 0, err
    assert "measured qwen2.5-coder-1.5b, but this sweep runs smollm2" in err
    code, _, err = _experiment(tmp_path, capsys, *held_out, "--models", "qwen2.5-coder-1.5b")
    assert code == 0, err
    assert "but this sweep runs" not in err  # (the time estimate's "speeds measured" may show)


def _served_sweep(tmp_path: Path, base_url: str, served_model: str) -> Path:
    sweep = {
        "tasks": ["logic3"], "models": ["box"], "configs": ["1c2t"], "strengths": ["strong"],
        "k": [8], "max_tokens": 8, "n": 1,
        "endpoints": {"box": {"base_url": base_url, "served_model": served_model,
                              "connect_timeout_s": 5}},
    }  # fmt: skip
    path = tmp_path / "served.yaml"
    path.write_text(yaml.safe_dump(sweep))
    return path


def test_served_endpoints_are_checked_before_anything_is_written(tmp_path, capsys) -> None:
    out = tmp_path / "r.jsonl"
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    for dry in (["--dry-run"], []):
        code = main(["experiment", "--sweep", str(_served_sweep(tmp_path, dead, "m")), "--out",
                     str(out), "--quiet", *dry])  # fmt: skip
        err = capsys.readouterr().err
        assert code == 2 and "no answer from" in err and "is the server running" in err
        assert not out.exists()
    with model_list_server(["other"]) as base_url:
        wrong = _served_sweep(tmp_path, base_url, "m")
        for dry in (["--dry-run"], []):
            code = main(["experiment", "--sweep", str(wrong), "--out", str(out), "--quiet", *dry])
            err = capsys.readouterr().err
            assert code == 2 and "does not serve a model named 'm'; it serves: other" in err
            assert not out.exists()
        right = _served_sweep(tmp_path, base_url, "other")
        code, _, err = _experiment(tmp_path, capsys, "--sweep", str(right))
        assert code == 0, err


def test_an_index_out_of_range_says_the_range(capsys) -> None:
    from rrdemo.tasks import load_questions

    size = len(load_questions("logic3"))
    assert main(["run", "--task", "logic3", "--index", str(size)]) == 2
    err = capsys.readouterr().err
    assert f"--index {size} is out of range: logic3 has {size} questions" in err
    assert f"so --index takes 0 to {size - 1}" in err


def test_a_dry_run_counts_only_the_units_left(tmp_path, capsys) -> None:
    """A finished sweep's dry run has 0 units left and nothing to decode; half of it, the rest."""
    from rrdemo.cli.experiment import sweep_from_args
    from rrdemo.runs.runner import run_plan
    from rrdemo.runs.spec import plan_sweep
    from tests.support.fakes import FakeBackend, FakePool, obeys_injection

    out = tmp_path / "r.jsonl"
    settings = ["--tasks", "logic3", "--models", "smollm2", "--configs", "0c3t,2c1t"]
    settings += ["--strengths", "strong", "--n", "2", "--k", "4", "--max-tokens", "8"]
    args = build_parser().parse_args(["experiment", *settings, "--out", str(out)])
    plan = plan_sweep(sweep_from_args(args))
    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    run_plan(plan, out, pool, progress=False, shard=(1, 2))  # half of the 4 units
    code, _, err = _experiment(tmp_path, capsys, *settings)
    assert code == 0, err
    assert "4 (condition, question) units, 2 already in" in err and ", 2 left" in err
    assert "estimate: 2 units left; decode at most" in err
    run_plan(plan, out, pool, progress=False)  # the rest
    code, _, err = _experiment(tmp_path, capsys, *settings)
    assert code == 0, err
    assert "4 already in" in err and ", 0 left" in err
    assert "no units left to run, nothing to decode" in err
