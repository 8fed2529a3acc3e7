"""The run log's one reader: every committed log reads back, one outcome per logged answer or
trajectory of a finished unit, and the header is what the plan writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rrdemo.errors import RRError
from rrdemo.runs.log import dump_record, read_log, read_run
from rrdemo.runs.runner import run_plan
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
