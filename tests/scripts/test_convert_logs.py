"""scripts/convert_logs.py: a version-1 log becomes exactly what the current writer writes, in
place, idempotently, and resumes without re-running a unit."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from rrdemo.errors import RRError
from rrdemo.runs.log import LogWriter, read_log
from rrdemo.runs.runner import run_plan
from tests.support.fakes import fake_plan, fake_pool

ROOT = Path(__file__).resolve().parents[2]
script = runpy.run_path(str(ROOT / "scripts" / "convert_logs.py"))


def _as_version_1(text: str) -> str:
    """The same log as an rrdemo with log version 1 wrote it."""
    lines = []
    for line in text.splitlines():
        record = json.loads(line)
        if record["type"] == "header":
            record["version"] = 1
        for chunk in record.get("chunks", []):
            chunk["role"] = {"honest": "truthful"}.get(chunk["role"], chunk["role"])
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def test_a_version_1_log_converts_to_what_the_writer_writes_and_resumes(tmp_path) -> None:
    plan, log = fake_plan(), tmp_path / "run.jsonl"
    run_plan(plan, log, fake_pool(), progress=False)
    current = log.read_bytes()
    old = _as_version_1(current.decode())
    assert '"truthful"' in old
    log.write_text(old)
    with pytest.raises(RRError, match="convert_logs"):
        read_log(log)

    assert script["convert_file"](log) > 0
    assert log.read_bytes() == current
    assert script["convert_file"](log) == 0  # idempotent
    assert run_plan(plan, log, fake_pool(), progress=False).units_run == 0  # resumes, runs nothing


def test_lines_an_older_rrdemo_appended_after_a_conversion_are_converted_too(tmp_path) -> None:
    plan, log = fake_plan(), tmp_path / "run.jsonl"
    run_plan(plan, log, fake_pool(), progress=False)
    current = log.read_text()
    lines = current.splitlines(keepends=True)
    grown = "".join(lines[:-3]) + _as_version_1("".join(lines[-3:]))
    log.write_text(grown)
    script["convert_file"](log)
    assert log.read_text() == current


def test_a_log_being_written_is_not_converted(tmp_path) -> None:
    plan, log = fake_plan(), tmp_path / "run.jsonl"
    run_plan(plan, log, fake_pool(), progress=False)
    writer = LogWriter(log)
    try:
        with pytest.raises(RRError, match="another run"):
            script["convert_file"](log)
    finally:
        writer.close()


def test_the_committed_logs_are_current() -> None:
    for path in sorted((ROOT / "assets").rglob("*.jsonl")):
        if json.loads(path.open().readline()).get("format") == "rrdemo-experiment":
            assert read_log(path).header["version"] == 2, path
