"""The run log written: a new log's header, resuming a log (cut back to its last finished
unit), and joining the logs of one sweep run in shards. The lines go through
`rrdemo.jsonl.LogWriter`; they are read back by `rrdemo.runs.log`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rrdemo.errors import RRError
from rrdemo.jsonl import LogWriter, dump_record, replace_log
from rrdemo.runs.log import LOG_FORMAT, LOG_VERSION, RunLog, read_log

if TYPE_CHECKING:
    from rrdemo.runs.spec import Plan


def header_for(plan: Plan) -> dict[str, Any]:
    from rrdemo.tasks.benchmarks import prompt_texts

    return {
        "type": "header",
        "format": LOG_FORMAT,
        "version": LOG_VERSION,
        "sweep": plan.sweep,
        "conditions": [c.describe() for c in plan.conditions],
        "prompts": prompt_texts(),  # the texts every prompt of the run was built from
    }


def prompt_changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    """Which prompt texts differ between two headers ("final_format, work_cue"), or ""."""
    before, after = old.get("prompts") or {}, new.get("prompts") or {}
    if not before:
        return "the log records none" if after else ""
    return ", ".join(k for k in dict.fromkeys([*before, *after]) if before.get(k) != after.get(k))


def sweep_changes(old: dict, new: dict) -> str:
    """How the sweep of header `new` differs from that of header `old`: each changed setting as
    `name old -> new`, or, with the same settings, that the conditions differ."""
    before, after = old.get("sweep") or {}, new.get("sweep") or {}
    names = [
        name for name in dict.fromkeys([*after, *before]) if before.get(name) != after.get(name)
    ]
    if not names:
        return "same settings, but its conditions differ: other questions or configs"
    return "; ".join(
        f"{name} {_shown(before.get(name))} -> {_shown(after.get(name))}" for name in names
    )


def _shown(value: object, width: int = 60) -> str:
    text = json.dumps(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def check_resumable(path: Path, plan: Plan) -> tuple[RunLog, bool] | None:
    """The log at `path` and whether `plan` resumes it under new question counts; None when
    there is no log yet. RRError when it holds another sweep or was written with other prompts.
    Reads only: the dry run asks it too."""
    from rrdemo.runs.recount import recount_problem

    if not path.exists():
        return None
    header = header_for(plan)
    log = read_log(path)
    recounted = (  # the same sweep but its question counts (checked below)
        log.header.get("sweep") != plan.sweep
        or log.header.get("conditions") != header["conditions"]
    )
    problem = recount_problem(log.header, header, log.done) if recounted else None
    if problem is not None:
        raise RRError(
            f"{path} holds a different sweep ({sweep_changes(log.header, header)}); "
            + (
                f"its question counts cannot change so: {problem}"
                if problem
                else "rerun with the same settings to resume it, or choose another --out "
                "for this one"
            )
        )
    changed = prompt_changes(log.header, header)
    if changed:
        raise RRError(
            f"{path} was written with other prompts ({changed} changed since); its units "
            "cannot be continued under today's prompts: choose another --out"
        )
    return log, recounted


def open_log(path: Path, plan: Plan) -> tuple[LogWriter, set[tuple[str, str]]]:
    """Start a new log, or resume an existing one written by the same sweep (cut to its last unit),
    or by the same sweep with other question counts (`rrdemo.runs.recount`: its header rewritten)."""
    from rrdemo.runs.recount import rewrite_header

    header = header_for(plan)
    resumed = check_resumable(path, plan)
    if resumed is not None:
        log, recounted = resumed
        if recounted:  # the header names the new counts; a half-finished unit is dropped
            probe = LogWriter(path)  # refuses while another run writes this log
            try:
                rewrite_header(path, dump_record(header), log.keep_bytes)
            finally:
                probe.close()
            return LogWriter(path), log.done
        writer = LogWriter(path)
        os.truncate(path, log.keep_bytes)  # drop a half-finished unit; the runner redoes it
        return writer, log.done
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_record(header))
    return LogWriter(path), set()


def merge_logs(paths: Sequence[Path | str], out: Path | str) -> int:
    """Join the logs of one sweep run in shards (`run_plan(shard=...)`) or on several machines
    into `out`: the header once, then every finished unit once (from the first log holding it),
    its trajectory records before its done record. Returns the number of units written. Logs
    of different sweeps are refused before anything is written."""
    logs = [read_log(path) for path in paths]
    if not logs:
        raise RRError("give at least one log to merge")
    for log in logs[1:]:
        if (log.header.get("sweep"), log.header.get("conditions")) != (
            logs[0].header.get("sweep"),
            logs[0].header.get("conditions"),
        ):
            changes = sweep_changes(logs[0].header, log.header)
            raise RRError(
                f"{log.path} holds a different sweep than {logs[0].path} ({changes}); not merged"
            )
        if prompt_changes(logs[0].header, log.header):
            raise RRError(
                f"{log.path} was written with other prompts than {logs[0].path} "
                f"({prompt_changes(logs[0].header, log.header)}); not merged"
            )
    seen: set[tuple[str, str]] = set()
    lines = [dump_record(logs[0].header)]
    for log in logs:
        pending: dict[tuple[str, str], list[dict]] = {}
        for _, record in log.records:
            unit = (record["condition"], record.get("question_id"))
            pending.setdefault(unit, []).append(record)
            if record["type"] == "done":
                records = pending.pop(unit)
                if unit not in seen:
                    seen.add(unit)
                    lines += [dump_record(r) for r in records]
    replace_log(out, lines)
    return len(seen)
