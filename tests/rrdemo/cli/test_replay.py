"""`rrdemo replay`: a logged question printed as `rrdemo run` prints a live one; plain errors."""

from __future__ import annotations

import json
from pathlib import Path

from rrdemo.cli import main
from rrdemo.replay import read_unit, recorded_events
from rrdemo.runs.log import read_log
from tests.support.events import event_from_dict

LOG = Path(__file__).resolve().parents[3] / "assets" / "experiment_small_shuffled.jsonl"
TRAP = "logic3:eac174d3de187c11"  # strong 3c2t


def test_replay_prints_the_run_stream_with_the_speaker_summary(capsys) -> None:
    code = main(
        ["replay", str(LOG), "--question", "logic3-0020", "--condition", TRAP, "--no-color"]
    )
    out, err = capsys.readouterr()
    assert code == 0
    assert "recorded: smollm2" in err and "config eac174d3de187c11" in err
    assert "=== MAJ · 3c2t (rho=0.6) · strong · N=5 K=16 M=5 L=128 shuffled order" in out
    assert "--- RRMaj trajectory 0 turn 0 · agent" in out
    assert ">>> MAJ decision: (B) -> wrong" in out
    assert ">>> RRMaj decision: (C) -> correct" in out
    assert out.rstrip().splitlines()[-6].startswith("=== RRMaj speakers: ")


def test_replay_json_is_the_recorded_event_stream(capsys) -> None:
    argv = ["replay", str(LOG), "--question", "logic3-0020", "--condition", TRAP, "--json"]
    assert main([*argv, "--deltas"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[-1]["kind"] == "speaker_summary"
    events = [event_from_dict(line) for line in lines[:-1]]
    unit = read_unit(read_log(LOG), "logic3-0020", TRAP)
    assert events == [event for _, event in recorded_events(unit)]


def test_replay_lists_questions_and_names_what_is_wrong(capsys, tmp_path) -> None:
    assert main(["replay", str(LOG)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].startswith("logic3-0009  --condition logic3:") and len(listed) == 64
    assert main(["replay", str(LOG), "--question", "logic3-0009"]) == 2
    assert "several conditions; pick one" in capsys.readouterr().err
    other = tmp_path / "notes.txt"
    other.write_text("not a log\n")
    assert main(["replay", str(other), "--question", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is not an rrdemo experiment log" in err[0]
