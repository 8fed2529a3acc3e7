"""rrdemo.rates: speeds fitted on real committed logs, answer lengths from the logs and from the
calibration, and the time a study's dry run, status and the Arena state from them."""

from __future__ import annotations

import json
from dataclasses import astuple, replace
from pathlib import Path

import pytest

from rrdemo.cli import main
from rrdemo.rates import Rates, UnitShape, duration, load_rates, unit_estimate
from rrdemo.rates_fit import fit_rates
from rrdemo.runs.log import read_log

ROOT = Path(__file__).resolve().parents[2]
EVIDENCE = ROOT / "assets" / "evidence" / "log.jsonl"
CALIBRATION = ROOT / "assets" / "calibration" / "qwen15b_arith.jsonl"
MODEL = "qwen2.5-coder-1.5b"


@pytest.fixture(scope="module")
def rates() -> Rates:
    return Rates(fit_rates([EVIDENCE], [CALIBRATION]))


def test_the_fitted_line_gives_back_the_logs_total_time(rates) -> None:
    """Least squares with a per-unit part: over the units it was fitted on, the line's total is
    the measured total (what `rrdemo study status` relies on for a run's own log)."""
    log = read_log(EVIDENCE)
    measured = predicted = 0.0
    for done in log.finished_units():
        for method, compute in done["compute"].items():
            speed = rates.speed(MODEL, "llamacpp", method, True, "end")
            predicted += speed.seconds(compute["decode_tokens"])
            measured += compute["wall_s"]
    assert measured > 3600 and predicted == pytest.approx(measured, rel=0.01)
    assert rates.speed(MODEL, "llamacpp", "MAJ", False, "end") is None  # no meter-off unit logged


def _mean(values: list[int], cap: int = 512) -> float:
    return sum(min(v, cap) for v in values) / len(values)


def test_lengths_come_from_the_log_then_from_the_calibration_mixed_as_the_config(rates) -> None:
    lengths: dict[str, list[int]] = {}
    for record in json.loads(f"[{','.join(CALIBRATION.read_text().splitlines()[1:])}]"):
        if record["task"] == "arith2" and record["style"] == "direct":
            lengths.setdefault(record["injection"], []).append(record["n_tokens"])
    logged = rates.expected_length((MODEL, "arith2", "direct", "moderate", "3c2t"), "MAJ", 512)
    assert 20 < logged < 40  # the evidence run's 3c2t answers
    # 2c3t was never run: two injected answers and three honest ones, from the calibration
    mixed = rates.expected_length((MODEL, "arith2", "direct", "moderate", "2c3t"), "MAJ", 512)
    expected = (2 * _mean(lengths["moderate"]) + 3 * _mean(lengths["none"])) / 5
    assert mixed == pytest.approx(expected, abs=3)  # quantiles, not every answer
    cut = rates.expected_length((MODEL, "arith2", "direct", "moderate", "2c3t"), "MAJ", 16)
    assert cut <= 16
    assert (
        rates.expected_length(("other-model", "arith2", "direct", "moderate", "2c3t"), "MAJ", 64)
        is None
    )


def test_a_unit_with_nothing_logged_counts_m_times_l_and_takes_a_given_rate(rates) -> None:
    shape = UnitShape(("other", "gsm8k", "direct", "strong", "3c2t"), "openai", False, "end",
                      ("MAJ", "RRMaj"), 5, 512)  # fmt: skip
    assert [e[1:] for e in unit_estimate(shape, rates)] == [(2560, True, None)] * 2
    assert [e[3] for e in unit_estimate(shape, rates, rate=256.0)] == [10.0, 10.0]


STUDY = """kind: experiment
log: log.jsonl
shards: 2
settings: {tasks: [logic3], models: [smollm2], configs: [0c3t, 2c1t], strengths: [strong],
           n: 2, k: [4], max_tokens: 8, backend: transformers}
"""


def _out(capsys, *argv: str) -> str:
    assert main(list(argv)) == 0
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_status_says_the_time_left_and_a_finished_study_has_none(tmp_path, capsys) -> None:
    from rrdemo.runs.runner import run_plan
    from rrdemo.runs.spec import plan_sweep
    from rrdemo.study.file import load_study
    from tests.support.fakes import FakeBackend, FakePool, obeys_injection

    path = tmp_path / "study.yaml"
    path.write_text(STUDY)
    study = load_study(path)
    plan = plan_sweep(dict(study.settings))
    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    dry = _out(capsys, "study", str(path), "run", "--dry-run")
    assert (
        "expected time: about" in dry and "for 4 units (" in dry and "2 shards side by side" in dry
    )
    run_plan(plan, study.shard_log(1), pool, progress=False, shard=(1, 2))
    status = _out(capsys, "study", str(path), "status")
    assert "time left: about" in status and "for 2 units" in status
    assert "time left: about" in _out(capsys, "status", str(study.shard_log(1)))  # a log alone
    given = _out(capsys, "study", str(path), "status", "--rate", "4")
    assert "the given rate, 4 decoded tokens/s" in given
    run_plan(plan, study.shard_log(2), pool, progress=False, shard=(2, 2))
    assert "time left: 0 s, no units left" in _out(capsys, "study", str(path), "status")
    assert "expected time: 0 s, no units left" in _out(
        capsys, "study", str(path), "run", "--dry-run", "--shard", "2/2"
    )


def test_a_calibration_dry_run_gives_its_tokens_and_a_time_at_a_rate(tmp_path, capsys) -> None:
    argv = ["calibrate", "--models", MODEL, "--tasks", "arith2", "--n", "4", "--dry-run"]
    argv += ["--out", str(tmp_path / "c.jsonl")]
    # on llama.cpp, from the MAJ decode speed the committed experiment logs measured
    said = _out(capsys, *argv, "--backend", "llamacpp")
    assert "12 answers left, about" in said and "expected time: about" in said
    speed = load_rates().speed(MODEL, "llamacpp", "MAJ", False, "end")
    tokens = int(said.split("about ")[1].split(" tokens")[0].replace(",", ""))
    assert duration(speed.per_token * tokens) in said
    # an engine no log measured for the model: a measured model's speed scaled by weight size
    said = _out(capsys, *argv, "--backend", "transformers")
    assert "expected time: about" in said and "smollm2's measured speed scaled by weight" in said
    # a model of no known size: no time without a rate
    unknown = ["calibrate", "--models", "someone/unlisted", "--tasks", "arith2", "--n", "4"]
    said = _out(capsys, *unknown, "--dry-run", "--out", str(tmp_path / "u.jsonl"))
    assert "no decode speed is measured" in said and "give --rate" in said
    said = _out(capsys, *argv, "--rate", "10")
    assert "expected time at 10 decoded tokens/s:" in said


def test_the_arena_states_the_expected_time_before_a_run() -> None:
    from ui.arena_controls import _silence_text
    from ui.state import ArenaRequest

    line = _silence_text(*astuple(replace(ArenaRequest(), model="smollm2", task="logic3")))
    assert "**Expected time**: about" in line and "on this machine" in line


def test_a_lengths_only_log_gives_lengths_but_no_speed() -> None:
    """A log that ran otherwise than studies run now (other threads) gives its answer lengths
    and no speed."""
    both = Rates(fit_rates([EVIDENCE], [CALIBRATION]))
    lengths = Rates(fit_rates([EVIDENCE], [CALIBRATION], lengths_only=[EVIDENCE]))
    assert both.speed(MODEL, "llamacpp", "MAJ", True, "end") is not None
    assert lengths.speed(MODEL, "llamacpp", "MAJ", True, "end") is None
    group = (MODEL, "arith2", "direct", "moderate", "3c2t")
    assert lengths.expected_length(group, "MAJ", 512) == both.expected_length(group, "MAJ", 512)
