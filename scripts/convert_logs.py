"""Convert experiment logs to the current log format, in place.

    PYTHONPATH=. python scripts/convert_logs.py assets/qwen15b/log.jsonl [more.jsonl ...]
    PYTHONPATH=. python scripts/convert_logs.py --all      # every *.jsonl log under assets/ and runs/

Version 1 -> 2: a chunk written by an honest agent has the role "honest" (was "truthful"), and
the header says version 2. Nothing else changes: condition keys, config hashes and the sweep
stay as they are, so a converted log resumes under the same sweep file without re-running a unit.

Every line is converted on its own, whatever the header says, so the script is idempotent (a
converted log is left byte for byte as it is) and also converts lines that an older rrdemo
appended after a conversion. The file is rewritten atomically (a temporary file, then a rename):
stop a sweep that appends to the log before converting it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rrdemo.runs.log import LOG_FORMAT, LOG_VERSION, LogWriter, dump_record

ROLE_RENAMES = {"truthful": "honest"}


def convert_record(record: dict) -> dict:
    """One log record in the current format (the same object when nothing changes)."""
    header = record.get("type") == "header" and record.get("format") == LOG_FORMAT
    if header and record.get("version") != LOG_VERSION:
        record = {**record, "version": LOG_VERSION}
    chunks = record.get("chunks")
    if isinstance(chunks, list) and any(c.get("role") in ROLE_RENAMES for c in chunks):
        chunks = [{**c, "role": ROLE_RENAMES.get(c.get("role"), c.get("role"))} for c in chunks]
        record = {**record, "chunks": chunks}
    return record


def convert_file(path: Path) -> int:
    """Convert `path` in place; return how many lines changed (0: already current).

    Holds the log's writer lock meanwhile: RRError while a run is appending to it."""
    lock = LogWriter(path)
    try:
        return _convert_locked(path)
    finally:
        lock.close()


def _convert_locked(path: Path) -> int:
    lines = path.read_bytes().splitlines(keepends=True)
    out, changed = [], 0
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            out.append(line)  # a half-written last line: the runner cuts it when it resumes
            continue
        new = convert_record(record) if isinstance(record, dict) else record
        if new is record:
            out.append(line)
        else:
            out.append(dump_record(new))
            changed += 1
    if changed:
        tmp = path.with_name(path.name + ".converting")
        tmp.write_bytes(b"".join(out))
        os.replace(tmp, path)
    return changed


def _is_log(path: Path) -> bool:
    with path.open("rb") as f:
        first = f.readline()
    try:
        header = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(header, dict) and header.get("format") == LOG_FORMAT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("logs", nargs="*", type=Path, help="experiment logs (.jsonl)")
    parser.add_argument("--all", action="store_true", help="every log under assets/ and runs/")
    args = parser.parse_args(argv)
    paths = list(args.logs)
    if args.all:
        paths += [p for root in ("assets", "runs") for p in sorted(Path(root).rglob("*.jsonl"))]
    paths = [p for p in paths if _is_log(p)]
    if not paths:
        parser.error("no experiment log given (or found with --all)")
    for path in paths:
        changed = convert_file(path)
        print(f"{path}: {changed} line(s) converted" if changed else f"{path}: already current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
