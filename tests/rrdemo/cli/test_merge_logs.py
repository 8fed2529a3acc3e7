"""`rrdemo merge-logs`: the committed log split into two shards by unit is joined back into the
same finished units; logs of different sweeps are refused with one line and exit 2."""

from __future__ import annotations

import json
from pathlib import Path

from rrdemo.cli import main
from rrdemo.runs.log import read_log

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "assets" / "experiment_small.jsonl"


def _shards(tmp_path: Path) -> list[Path]:
    """The log's units dealt alternately into two logs with the same header."""
    header, *records = SMALL.read_text(encoding="utf-8").splitlines(keepends=True)
    shards, unit, which = [[header], [header]], [], 0
    for line in records:
        unit.append(line)
        if json.loads(line)["type"] == "done":
            shards[which] += unit
            unit, which = [], 1 - which
    paths = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for path, lines in zip(paths, shards, strict=True):
        path.write_text("".join(lines), encoding="utf-8")
    return paths


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
