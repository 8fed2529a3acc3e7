"""`python -m rrdemo.experiment` is `rrdemo experiment`: same options, same checks, same plan."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )


def test_importing_it_runs_nothing():
    module = importlib.import_module("rrdemo.experiment")
    assert module.__doc__.startswith("`python -m rrdemo.experiment ...`")


def test_it_plans_what_the_experiment_command_plans(tmp_path):
    flags = [
        "--tasks", "logic3", "--configs", "0c3t,2c1t", "--strengths", "strong", "--k", "4",
        "--max-tokens", "8", "--n", "2", "--dry-run", "--out", str(tmp_path / "r.jsonl"),
    ]  # fmt: skip
    alias = _run("rrdemo.experiment", *flags)
    command = _run("rrdemo", "experiment", *flags)
    assert alias.returncode == command.returncode == 0, alias.stderr
    assert alias.stdout == command.stdout and "2c1t" in alias.stdout
    assert not (tmp_path / "r.jsonl").exists()  # a dry run writes nothing


def test_bad_flags_are_refused_as_the_command_refuses_them():
    alias = _run("rrdemo.experiment", "--configs", "9c9t", "--dry-run")
    assert alias.returncode == 2 and alias.stdout == ""
    assert alias.stderr.strip().splitlines()[-1].startswith("rrdemo experiment: error:")
