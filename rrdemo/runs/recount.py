"""Resuming a log under other question counts (`n_by_config`, `n`): a run stopped at 40 questions
per config can go on to 80 at 3c2t only, or a config can be cut back to the questions it has.

Allowed when nothing else changed (the same settings but the counts, the same conditions) and
each condition's questions before and after agree on what they share (the shorter list is the
start of the longer one: the runner's question-major order), and every finished unit of the log is
still a unit of the new plan. The log's header is then rewritten to the new plan, atomically;
its records are kept byte for byte.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from rrdemo.errors import RRError

COUNT_KEYS = ("n", "n_by_config")  # the settings a recount may change


def _without(sweep: dict[str, Any] | None) -> dict[str, Any]:
    return {k: v for k, v in (sweep or {}).items() if k not in COUNT_KEYS}


def _unquestioned(condition: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in condition.items() if k != "questions"}


def _shared_start(before: list[str], after: list[str]) -> bool:
    common = min(len(before), len(after))
    return before[:common] == after[:common]


def recount_problem(
    old: dict[str, Any], new: dict[str, Any], done: set[tuple[str, str]]
) -> str | None:
    """Why header `old` (with finished units `done`) cannot be resumed as header `new` by a change
    of question counts ("" when it is not such a change at all), or None when it can."""
    if _without(old.get("sweep")) != _without(new.get("sweep")):
        return ""
    before = {c["key"]: c for c in old.get("conditions") or []}
    after = {c["key"]: c for c in new.get("conditions") or []}
    if list(before) != list(after):
        return ""
    for key, cond in after.items():
        if _unquestioned(before[key]) != _unquestioned(cond):
            return ""
        if not _shared_start(before[key]["questions"], cond["questions"]):
            return (
                f"condition {cond['label']} ({cond['task']}) would run other questions, not a "
                "longer or shorter run of the same ones (a new n draws a new sample; change "
                "n_by_config instead, or choose another --out)"
            )
    dropped = sorted(
        (after[key]["label"], qid) for key, qid in done if qid not in set(after[key]["questions"])
    )
    if dropped:
        labels = sorted({label for label, _ in dropped})
        return (
            f"{len(dropped)} finished unit(s) of {', '.join(labels)} lie beyond the new question "
            "counts; raise them to keep what was run, or choose another --out"
        )
    return None


def rewrite_header(path: Path, header_line: bytes, keep_bytes: int) -> None:
    """Replace the first line of log `path` by `header_line`, keeping its records up to
    `keep_bytes` (the last finished unit); written beside it and renamed, so a kill leaves either
    the old log or the new one."""
    raw = path.read_bytes()
    body = raw[raw.index(b"\n") + 1 : keep_bytes]
    tmp = path.with_name(path.name + ".recount")
    try:
        with open(tmp, "wb") as f:
            f.write(header_line + body)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise RRError(f"cannot rewrite the header of {path}: {exc.strerror}") from None
