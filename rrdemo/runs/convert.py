"""Convert experiment logs to the current log format, in place; nothing is run again.

    rrdemo convert-logs assets/qwen15b/log.jsonl [more.jsonl ...]
    rrdemo convert-logs --all      # every *.jsonl log under assets/ and runs/

What changes, by version:
  * 1 -> 2: a chunk written by an honest agent has the role "honest" (was "truthful").
  * 2 -> 3: a config is logged, and hashed, with every field (fields at their default were left
    out). The header is rebuilt with the current code from what it stores: the normalised sweep,
    and each condition from its logged config (new config hash, new key `task:hash`, the
    adversary and turn policy named); every record's condition key follows. A converted log
    resumes under the same sweep file without re-running a unit.
The gallery manifest (assets/gallery.json, or --gallery) names conditions by key: the settings
of converted logs get the new keys.

The header is rebuilt and every other line converted on its own, whatever the header says, so the
conversion is idempotent (a converted log is left byte for byte as it is). The file is rewritten
atomically (a temporary file, then a rename) under the log's writer lock, and keeps its
modification time (an export dates a run by it): stop a sweep that appends to the log first.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rrdemo.config import RunConfig
from rrdemo.jsonl import LogWriter, dump_record
from rrdemo.runs.log import LOG_FORMAT, LOG_VERSION, RECORD_TYPES
from rrdemo.runs.record import same_record
from rrdemo.runs.spec import describe_condition
from rrdemo.runs.sweep import normalize_sweep


def _is_header(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and record.get("type") == "header"
        and record.get("format") == LOG_FORMAT
    )


def convert_header(header: dict) -> tuple[dict, dict[str, str]]:
    """The header as the current writer writes it, and each old condition key's new key."""
    sweep = normalize_sweep(header["sweep"])
    keys, conditions = {}, []
    for cond in header["conditions"]:
        config = RunConfig.from_dict(cond["config"])
        new = describe_condition(cond["task"], config, cond["questions"], sweep["corrupted_first"])
        if "methods" in cond:  # a condition that runs one method says which (Condition.describe)
            new["methods"] = cond["methods"]
        keys[cond["key"]] = new["key"]
        conditions.append(new)
    rebuilt = {**header, "version": LOG_VERSION, "sweep": sweep, "conditions": conditions}
    return rebuilt, keys


def convert_record(record: dict, keys: dict[str, str]) -> dict:
    """One trajectory or done record as the current writer writes it (`rrdemo.runs.record`: read
    back into the fold's objects and written again), under its condition's new key; an older
    honest role ("truthful") reads as honest."""
    if record.get("type") not in RECORD_TYPES:
        return record
    return same_record(record, keys.get(record.get("condition")))


def convert_file(path: Path) -> tuple[int, dict[str, str]]:
    """Convert `path` in place; return how many lines changed (0: already current) and each old
    condition key's new key.

    Holds the log's writer lock meanwhile: RRError while a run is appending to it."""
    lock = LogWriter(path)
    try:
        return _convert_locked(path)
    finally:
        lock.close()


def _convert_locked(path: Path) -> tuple[int, dict[str, str]]:
    lines = path.read_bytes().splitlines(keepends=True)
    out, changed, keys = [], 0, {}
    for number, line in enumerate(lines):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            out.append(line)  # a half-written last line: the runner cuts it when it resumes
            continue
        if number == 0 and _is_header(record):
            new, keys = convert_header(record)
        elif isinstance(record, dict):
            new = convert_record(record, keys)
        else:
            new = record
        if new == record:
            out.append(line)
        else:
            out.append(dump_record(new))
            changed += 1
    if changed:
        times = os.stat(path)
        tmp = path.with_name(path.name + ".converting")
        tmp.write_bytes(b"".join(out))
        os.replace(tmp, path)
        os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))
    return changed, keys


def rename_in_gallery(manifest: Path, converted: dict[Path, dict[str, str]]) -> int:
    """Give the gallery settings of the converted logs their conditions' new keys; returns how
    many settings changed (the manifest is rewritten only then)."""
    data = json.loads(manifest.read_text(encoding="utf-8"))
    changed = 0
    for setting in data.get("settings") or []:
        keys = converted.get((manifest.parent / setting["log"]).resolve(), {})
        new = keys.get(setting["condition"], setting["condition"])
        if new != setting["condition"]:
            setting["condition"], changed = new, changed + 1
    if changed:
        manifest.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


def is_log(path: Path) -> bool:
    """Whether `path` starts with a run log's header (of any version)."""
    with path.open("rb") as f:
        first = f.readline()
    try:
        return _is_header(json.loads(first))
    except json.JSONDecodeError:
        return False
