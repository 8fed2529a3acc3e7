"""`rrdemo merge-logs`: the committed log split into two shards by unit is joined back into the
same finished units; two calibration shards are joined into a calibration log the report reads;
logs of different sweeps or calibrations, or of both kinds, are refused with one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrdemo.calibration.log import read_calibration
from rrdemo.calibration.plan import plan_calibration
from rrdemo.calibration.runner import run_calibration
from rrdemo.cli import main
from rrdemo.runs.log import read_log
from tests.support.fakes import FakeBackend, FakePool, split_log

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "assets" / "experiment_small.jsonl"


def _shards(tmp_path: Path) -> list[Path]:
    """The log's units dealt alternately into two logs with the same header."""
    return split_log(SMALL, [tmp_path / "a.jsonl", tmp_path / "b.jsonl"])


def test_shards_merge_back_into_every_unit(tmp_path: Path, capsys) -> None:
    a, b = _shards(tmp_path)
    assert len(read_log(a).done) == len(read_log(b).done) == 32
    out = tmp_path / "merged.jsonl"
    assert main(["merge-logs", str(a), str(b), "--out", str(out)]) == 0
    assert "64 units" in capsys.readouterr().err
    assert read_log(out).done == read_log(SMALL).done


def test_logs_of_different_sweeps_are_refused(tmp_path: Path, capsys) -> None:
    a, _ = _shards(tmp_path)
    other = ROOT / "assets" / "experiment_small_shuffled.jsonl"
    out = tmp_path / "merged.jsonl"
    assert main(["merge-logs", str(a), str(other), "--out", str(out)]) == 2
    assert "holds a different sweep" in capsys.readouterr().err
    assert not out.exists()


def _calibration(path: Path, shard: tuple[int, int] | None = None, max_tokens: int = 16) -> Path:
    """A calibration log answered by a fake agent (one shard of it when `shard` is given)."""
    plan = plan_calibration(
        {"models": "smollm2", "tasks": "logic3", "n": 3, "max_tokens": max_tokens}
    )
    backend = FakeBackend("smollm2", lambda prompt: "The answer is (A).")
    run_calibration(plan, path, FakePool(backend), shard=shard, progress=False)
    return path


def test_calibration_shards_merge_into_a_log_report_reads(tmp_path: Path, capsys) -> None:
    whole = _calibration(tmp_path / "whole.jsonl")
    a = _calibration(tmp_path / "c-1-of-2.jsonl", (1, 2))
    b = _calibration(tmp_path / "c-2-of-2.jsonl", (2, 2))
    assert main(["merge-logs", str(a), str(b), str(a), "--out", str(a)]) == 0  # out is an input
    assert "9 answers" in capsys.readouterr().err
    merged = read_calibration(a)
    assert merged.done == read_calibration(whole).done and len(merged.answers) == 9
    assert merged.header == read_calibration(whole).header
    assert not (tmp_path / "c-1-of-2.jsonl.merging").exists()
    assert main(["calibrate", "--report", str(a)]) == 0
    assert (
        "| smollm2 | logic3 | direct |"
        in (tmp_path / "c-1-of-2_report" / "calibration.md").read_text()
    )


@pytest.mark.parametrize("kind", ["calibration", "mixed"])
def test_logs_of_different_calibrations_or_kinds_are_refused(tmp_path: Path, capsys, kind) -> None:
    a = _calibration(tmp_path / "a.jsonl", (1, 2))
    if kind == "calibration":
        other, words = (
            _calibration(tmp_path / "b.jsonl", (2, 2), max_tokens=32),
            "different calibration",
        )
    else:
        other, words = SMALL, "is a calibration log but"
    before = a.read_bytes()
    for logs in ([a, other], [other, a]):
        out = tmp_path / "merged.jsonl"
        assert main(["merge-logs", *map(str, logs), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("rrdemo merge-logs: error: ") and words in err
        assert not out.exists() and a.read_bytes() == before


def test_a_missing_log_beside_a_calibration_is_named(tmp_path: Path, capsys) -> None:
    a = _calibration(tmp_path / "a.jsonl", (1, 2))
    missing = tmp_path / "b.jsonl"
    assert main(["merge-logs", str(a), str(missing), "--out", str(tmp_path / "m.jsonl")]) == 2
    assert f"{missing} does not exist" in capsys.readouterr().err
