"""`python -m rrdemo extract`, run as a real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def run_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "rrdemo", "extract", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


def test_prints_the_normal_form() -> None:
    result = run_cli("--task", "gsm8k", "--text", "She earns $1,200.00. The answer is $1,200.00.")
    assert (result.returncode, result.stdout, result.stderr) == (0, "1200\n", "")


def test_reads_stdin() -> None:
    result = run_cli(
        "--task", "Logic3", "--text", "-", stdin="(A) is out.\nSo the answer is (C).\n"
    )
    assert (result.returncode, result.stdout) == (0, "(C)\n")


def test_math_through_math_verify_path() -> None:
    result = run_cli("--task", "MATH-500", "--text", "Thus $\\boxed{\\dfrac{1}{2}}$.")
    assert (result.returncode, result.stdout) == (0, "\\frac{1}{2}\n")


def test_no_answer_exits_1_silently() -> None:
    result = run_cli("--task", "aqua", "--text", "I am not sure.")
    assert (result.returncode, result.stdout) == (1, "")


def test_unknown_task_exits_2_with_one_line() -> None:
    result = run_cli("--task", "mmlu", "--text", "The answer is (A).")
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown task 'mmlu'" in lines[0] and "track7" in lines[0]


def test_a_boxed_letter_is_read_and_a_copied_placeholder_is_no_answer() -> None:
    boxed = "Therefore, the original price of the item is \\(\\boxed{E}\\)."
    result = run_cli("--task", "aqua", "--text", boxed)
    assert (result.returncode, result.stdout) == (0, "(E)\n")
    copied = run_cli("--task", "gsm8k", "--text", "First we need packages of 2. The answer is N.")
    assert (copied.returncode, copied.stdout) == (1, "")
