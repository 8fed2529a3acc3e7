"""The calibration log: a JSONL header (settings, cells, the split) and one record per answer.

Each answer is one line, written as its batch finishes; a resumed run skips the (cell, question)
pairs already there. A last line without its newline (a write cut short by a kill) is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rrdemo.errors import RRError
from rrdemo.jsonl import LogWriter, dump_record, replace_log

if TYPE_CHECKING:
    from rrdemo.calibration.plan import CalibrationPlan

CALIBRATION_FORMAT = "rrdemo-calibration"
CALIBRATION_VERSION = 1


def header_for(plan: CalibrationPlan) -> dict[str, Any]:
    """The log's first line: what was asked and which questions the calibration uses."""
    from rrdemo.tasks.benchmarks import prompt_texts

    return {
        "format": CALIBRATION_FORMAT,
        "version": CALIBRATION_VERSION,
        "settings": plan.settings,
        "prompts": prompt_texts(),
        "cells": [cell.key for cell in plan.cells],
        "split": {task: [q.qid for q in questions] for task, questions in plan.split.items()},
    }


@dataclass
class CalibrationLog:
    path: Path
    header: dict[str, Any]
    answers: list[dict[str, Any]]
    keep_bytes: int  # the end of the last complete line

    @property
    def done(self) -> set[tuple[str, str]]:
        return {(a["cell"], a["question_id"]) for a in self.answers}


def _header(path: Path, complete: list[bytes]) -> dict[str, Any]:
    """The header from a log's complete lines; RRError when they are not a calibration log's."""
    try:
        header = json.loads(complete[0]) if complete else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != CALIBRATION_FORMAT:
        raise RRError(f"{path} is not a calibration log (rrdemo calibrate writes one)")
    if header.get("version") != CALIBRATION_VERSION:
        raise RRError(
            f"{path} is a calibration log of version {header.get('version')}; "
            f"this rrdemo reads version {CALIBRATION_VERSION}"
        )
    return header


def _cannot_read(path: Path, exc: OSError) -> RRError:
    return RRError(f"cannot read the calibration log {path}: {exc.strerror}")


def read_calibration_header(path: Path | str) -> dict[str, Any]:
    """Only the header of a calibration log (its first line), as `read_calibration` checks it:
    what a list of logs needs without reading their answers."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            first = f.readline()
    except OSError as exc:
        raise _cannot_read(path, exc) from None
    return _header(path, [first] if first.endswith(b"\n") else [])


def read_calibration(path: Path | str) -> CalibrationLog:
    """The one reader of a calibration log; RRError for a file that is not one."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise _cannot_read(path, exc) from None
    lines = data.split(b"\n")
    complete = lines[:-1]  # the part after the last newline is a cut write (or empty)
    header = _header(path, complete)
    answers = []
    for number, line in enumerate(complete[1:], start=2):
        try:
            answers.append(json.loads(line))
        except ValueError:
            raise RRError(f"{path}, line {number}: not a JSON record") from None
    return CalibrationLog(path, header, answers, len(data) - len(lines[-1]))


def split_of(path: Path | str) -> dict[str, set[str]]:
    """The question ids a calibration used, per task: what an evidence run must not use."""
    return {task: set(qids) for task, qids in read_calibration(path).header["split"].items()}


def calibration_changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    """How the calibration of header `new` differs from that of header `old` (each changed
    setting as `name: old -> new`, else the changed header parts), or "" for the same one."""
    changed = [k for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
    if not changed:
        return ""
    before, after = old.get("settings") or {}, new.get("settings") or {}
    differ = [
        f"{k}: {before.get(k)!r} -> {after.get(k)!r}"
        for k in dict.fromkeys([*after, *before])
        if before.get(k) != after.get(k)
    ]
    return "; ".join(differ) or ", ".join(changed)


def open_calibration(path: Path, plan: CalibrationPlan) -> tuple[LogWriter, set[tuple[str, str]]]:
    """Start a new log, or resume one written by the same calibration (a shard's log too: its
    header is the calibration's)."""
    header = header_for(plan)
    if path.exists():
        log = read_calibration(path)
        changed = calibration_changes(log.header, header)
        if changed:
            raise RRError(
                f"{path} holds a different calibration ({changed}); "
                "rerun with the same settings to resume it, or choose another --out"
            )
        writer = LogWriter(path)
        os.truncate(path, log.keep_bytes)
        return writer, log.done
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_record(header))
    return LogWriter(path), set()


def merge_calibrations(paths: Sequence[Path | str], out: Path | str) -> int:
    """Join the logs of one calibration run in shards (`run_calibration(shard=...)`) into `out`:
    the header once, then every (cell, question) answer once, from the first log holding it.
    Returns the number of answers written. Logs of different calibrations (settings, split or
    prompts) are refused before anything is written; `out` may be one of the inputs."""
    logs = [read_calibration(path) for path in paths]
    if not logs:
        raise RRError("give at least one calibration log to merge")
    for log in logs[1:]:
        changed = calibration_changes(logs[0].header, log.header)
        if changed:
            raise RRError(
                f"{log.path} holds a different calibration than {logs[0].path} ({changed}); "
                "not merged"
            )
    seen: set[tuple[str, str]] = set()
    lines = [dump_record(logs[0].header)]
    for log in logs:
        for answer in log.answers:
            key = (answer["cell"], answer["question_id"])
            if key not in seen:
                seen.add(key)
                lines.append(dump_record(answer))
    replace_log(out, lines)
    return len(seen)
