"""The run log's one reader: every committed log reads back, one outcome per logged answer or
trajectory of a finished unit, and the header is what the plan writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rrdemo.errors import RRError
from rrdemo.fold import fold
from rrdemo.jsonl import dump_record
from rrdemo.runs.log import read_log, read_run
from rrdemo.runs.record import (
    Unit,
    done_record,
    read_done,
    read_trajectory,
    same_record,
    trajectory_record,
)
from rrdemo.runs.runner import run_plan
from tests.rrdemo.test_fold import _answer, _rrmaj_stream
from tests.support.fakes import fake_plan, fake_pool

ROOT = Path(__file__).resolve().parents[3]
LOGS = [
    p
    for p in sorted((ROOT / "assets").rglob("*.jsonl"))
    if json.loads(p.open().readline()).get("format") == "rrdemo-experiment"
]


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_committed_log_reads_back_with_one_outcome_per_logged_line(path: Path) -> None:
    log, run = read_log(path), read_run(path)
    records = [record for _, record in log.records]
    done = {(r["condition"], r["question_id"]) for r in records if r["type"] == "done"}
    logged = [
        r
        for r in records
        if r["type"] == "trajectory" and (r["condition"], r["question_id"]) in done
    ]
    assert run.units == len(log.done) == len(done)
    assert len(run.outcomes) == len(logged)
    assert {o.condition for o in run.outcomes} <= set(run.conditions)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_committed_record_reads_into_objects_and_writes_back_the_same_line(
    path: Path,
) -> None:
    lines = path.read_bytes().splitlines(keepends=True)[1:]
    for line in lines:
        record = json.loads(line)
        assert dump_record(same_record(record)) == line, line[:120]


UNIT = Unit("logic3:abc", "q1", "(B)", "(C)")


def test_the_records_of_a_trajectory_and_of_a_unit_read_off_the_fold():
    shown = fold(_rrmaj_stream())
    record = trajectory_record(UNIT, shown.methods["RRMaj"].trajectories[0])
    assert record == {
        "type": "trajectory",
        "condition": "logic3:abc",
        "question_id": "q1",
        "method": "RRMaj",
        "trajectory": 0,
        "order": [2, 0, 1],
        "chunks": [
            {
                "turn": 0,
                "agent": 2,
                "role": "honest",
                "model": "m-honest",
                "text": "The answer",
                "n_tokens": 2,
            },
            {
                "turn": 1,
                "agent": 0,
                "role": "corrupted",
                "model": "m-bad",
                "text": " is (B).",
                "n_tokens": 3,
            },
        ],
        "answer": "(B)",
        "vote_key": "(b)",
        "correct": True,
        "fooled": False,
        "last_agent": 0,
        "last_corrupted": True,
        "n_tokens": 5,
        "finish_reason": "eos",
        "gold": "(B)",
        "target": "(C)",
    }
    done = done_record(UNIT, shown.methods.values())
    assert list(done) == ["type", "condition", "question_id", "gold", "target", "votes", "compute"]
    assert done["votes"] == {
        "RRMaj": {
            "counts": {"(B)": 1, "(C)": 1},
            "abstained": 0,
            "answer": "(B)",
            "key": "b",
            "correct": True,
            "fooled": False,
            "tied": ["(B)", "(C)"],
        }
    }
    assert done["compute"] == {
        "RRMaj": {
            "decode_tokens": 8,
            "prefill_tokens": 40,
            "wall_s": 0.5,
            "per_agent": {"m-bad": {"decode_tokens": 6}},
        }
    }
    json.dumps([record, done])  # plain JSON types
    # ... and read back into the same objects (the answer's text is its chunks')
    unit, trajectory = read_trajectory(record)
    assert unit == UNIT and trajectory.chunks == shown.methods["RRMaj"].trajectories[0].chunks
    assert trajectory_record(unit, trajectory) == record
    unit, methods = read_done(done)
    assert unit == UNIT and done_record(unit, methods.values()) == done


def test_a_record_needs_the_answer_and_an_unanswered_trajectory_has_no_vote_key():
    shown = fold(_rrmaj_stream()[:3])
    with pytest.raises(ValueError, match="no answer"):
        trajectory_record(UNIT, shown.methods["RRMaj"].trajectories[0])
    shown.apply(_answer("RRMaj", 0, None))
    assert trajectory_record(UNIT, shown.methods["RRMaj"].trajectories[0])["vote_key"] is None
    done = done_record(UNIT, shown.methods.values())
    assert done["votes"] == {} and done["compute"] == {}  # no method voted or finished yet


def test_the_writer_encoding_reads_back_equal(tmp_path: Path) -> None:
    plan, path = fake_plan(), tmp_path / "run.jsonl"
    run_plan(plan, path, fake_pool(), progress=False)
    lines = path.read_bytes().splitlines(keepends=True)
    assert all(dump_record(json.loads(line)) == line for line in lines)


def test_a_foreign_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"hello": 1}\n')
    with pytest.raises(RRError, match="not an rrdemo experiment log"):
        read_log(path)


def test_a_changed_sweep_is_refused_naming_each_changed_setting(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    run_plan(fake_plan(), path, fake_pool(), progress=False)
    before = path.read_bytes()
    with pytest.raises(RRError) as refused:
        run_plan(fake_plan(labels=("0c3t",), m_star=2), path, fake_pool(), progress=False)
    assert 'labels ["0c3t", "2c1t"] -> ["0c3t"]; m_star 3 -> 2' in str(refused.value)
    assert path.read_bytes() == before
