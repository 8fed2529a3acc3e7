"""`rrdemo theory`: the stability bound printed as a number, one line per K, or JSON."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rrdemo.cli import main as cli_main
from rrdemo.theory import PAPER_DRIFT, PAPER_GAMMA_H, PAPER_K, rho_max


def test_cli_prints_the_number(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["theory", "--gamma-h", "0.03", "--drift", "0.004", "--k", "100"]) == 0
    out = capsys.readouterr().out.strip()
    assert float(out) == pytest.approx(rho_max(0.03, 0.004, 100), abs=1e-4)
    assert out.startswith("0.66")


def test_cli_several_k_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["theory", "--k", "10", "1000"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [int(line.split()[0]) for line in lines] == [10, 1000]
    assert float(lines[0].split()[1]) > float(lines[1].split()[1])
    assert cli_main(["theory", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["k"] == 100 and data["super_majority"] is True
    assert data["restoration"] == pytest.approx(1 - (1 - 0.03) ** 100)


def test_cli_bad_input_exits_2_with_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "rrdemo", "theory", "--gamma-h", "2", "--k", "100"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "gamma_H" in proc.stderr and "Traceback" not in proc.stderr


def test_the_defaults_are_the_papers_worked_example(capsys) -> None:
    assert cli_main(["theory"]) == 0
    default = capsys.readouterr().out
    flags = ["--gamma-h", str(PAPER_GAMMA_H), "--drift", str(PAPER_DRIFT), "--k", str(PAPER_K)]
    assert cli_main(["theory", *flags]) == 0
    assert capsys.readouterr().out == default


def test_digits_and_json_for_several_k(capsys) -> None:
    assert cli_main(["theory", "--k", "100", "--digits", "7"]) == 0
    assert capsys.readouterr().out == f"{rho_max(PAPER_GAMMA_H, PAPER_DRIFT, 100):.7f}\n"
    assert cli_main(["theory", "--k", "10", "100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["k"] for d in data] == [10, 100]
    assert [d["rho_max"] for d in data] == pytest.approx(
        [rho_max(PAPER_GAMMA_H, PAPER_DRIFT, k) for k in (10, 100)]
    )


def test_a_bad_k_among_several_prints_nothing(capsys) -> None:
    assert cli_main(["theory", "--k", "10", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "K" in err
