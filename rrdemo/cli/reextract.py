"""`rrdemo reextract LOG [--write]`: the log's answers read again with the current rules.

An experiment log: every finished unit is concluded again as a run concludes it
(`rrdemo.runs.reextract`); a table says per task and method what changed. A calibration log: every
answer is extracted again as `calibrate` extracts it (`rrdemo.calibration.reextract`); a table says
per cell what changed. With `--write` the log's answers (and votes) are replaced.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `reextract` command."""
    parser = subparsers.add_parser(
        "reextract",
        help="read a log's answers again with the current rules, vote again, say what changed",
        description="Re-extract the answers of an experiment log with the current rules and vote "
        "again: a markdown table of changed answers, decisions and accuracies per task and "
        "method; of a calibration log: changed answers, right and obeyed counts per cell. "
        "Texts, compute and everything else stay as logged.",
    )
    parser.add_argument(
        "log", type=Path, help="the JSONL log written by `rrdemo experiment` or `rrdemo calibrate`"
    )
    parser.add_argument("--write", action="store_true", help="rewrite the log with the new answers")
    parser.add_argument(
        "--positions",
        action="store_true",
        help="calibration logs: also count again where each answer first states an answer "
        "(needs the model's tokenizer on this machine)",
    )
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    """Print the table; rewrite the log with --write."""
    from rrdemo.calibration.log import CALIBRATION_FORMAT, read_calibration_header
    from rrdemo.runs.log import read_log
    from rrdemo.runs.reextract import reextract, table, write_records

    if args.positions and _format(args.log) != CALIBRATION_FORMAT:
        from rrdemo.errors import RRError

        raise RRError("--positions reads calibration logs only (rrdemo calibrate writes them)")
    if _format(args.log) == CALIBRATION_FORMAT:
        from rrdemo.calibration.reextract import (
            calibration_table,
            reextract_calibration,
            write_calibration_records,
        )

        read_calibration_header(args.log)  # an older version is refused with its reason
        tallies, records = reextract_calibration(args.log, _counters() if args.positions else None)
        print(calibration_table(tallies))
        if args.write:
            write_calibration_records(args.log, records)
        return 0
    read_log(args.log)  # a missing, foreign or older log is refused with its reason
    tallies, records = reextract(args.log)
    print(table(tallies))
    if args.write:
        write_records(args.log, records)
    return 0


def _counters():
    """`count_for(model)`: each model's token counter, loaded once; RRError without one."""
    from functools import cache

    from rrdemo.backends.counting import token_counter
    from rrdemo.errors import RRError

    @cache
    def count_for(model: str):
        found = token_counter(model, assemble=True)
        if found is None:
            raise RRError(
                f"the tokenizer of {model} is not on this machine: --positions counts tokens "
                "with it (install the model, or re-extract without --positions)"
            )
        return found[0]

    return count_for


def _format(path: Path) -> str | None:
    """The "format" of a log's first line, or None when it has none (read_log then says why)."""
    import json

    try:
        with path.open("rb") as f:
            first = json.loads(f.readline() or b"null")
    except (OSError, ValueError):
        return None
    return first.get("format") if isinstance(first, dict) else None
