"""`rrdemo merge-logs LOG... --out LOG`: join the logs of one sweep, or of one calibration, run in
shards into one log.

    rrdemo merge-logs assets/qwen15b/log.jsonl assets/qwen15b/log.2.jsonl \\
        --out assets/qwen15b/log.jsonl
    rrdemo merge-logs runs/cal-1-of-2.jsonl runs/cal-2-of-2.jsonl --out runs/cal.jsonl

The kind is read from each log's header. Experiment logs: every finished unit is kept once (from
the first log that holds it), unfinished units are left out, logs of different sweeps are refused
(`rrdemo.runs.write.merge_logs`). Calibration logs: every (cell, question) answer once, logs of
different calibrations refused (`rrdemo.calibration.log.merge_calibrations`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rrdemo.errors import RRError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `merge-logs` command."""
    parser = subparsers.add_parser(
        "merge-logs",
        help="join the logs of a sweep or calibration run in shards (--shard I/N) into one",
        description="Join the logs of one sweep (`experiment --shard`) or one calibration "
        "(`calibrate --shard`) run in shards or on several machines: every finished unit or "
        "answer once, unfinished units left out; logs of different runs or kinds are refused.",
    )
    parser.add_argument("logs", nargs="+", help="the shards' .jsonl logs")
    parser.add_argument("--out", required=True, help="the merged log (may be one of the inputs)")
    parser.set_defaults(func=handler)


def _is_calibration(path: str) -> bool:
    """Whether the file's first line is a calibration log's header (anything else is left to
    the experiment log's reader, which names what is wrong)."""
    from rrdemo.calibration.log import CALIBRATION_FORMAT

    try:
        with Path(path).open("rb") as file:
            header = json.loads(file.readline())
    except (OSError, ValueError):
        return False
    return isinstance(header, dict) and header.get("format") == CALIBRATION_FORMAT


def handler(args: argparse.Namespace) -> int:
    """Merge by the logs' kind, then say how many units or answers the merged log holds."""
    from rrdemo.calibration.log import merge_calibrations
    from rrdemo.runs.log import read_log
    from rrdemo.runs.write import merge_logs

    kinds = [_is_calibration(path) for path in args.logs]
    if len(set(kinds)) > 1:
        calibration = args.logs[kinds.index(True)]
        experiment = args.logs[kinds.index(False)]
        read_log(experiment)  # a missing or foreign file: its reader says what is wrong
        raise RRError(
            f"{calibration} is a calibration log but {experiment} is an experiment log; merge "
            "the logs of one calibration, or of one experiment sweep, not both"
        )
    if kinds[0]:
        n = merge_calibrations(args.logs, args.out)
        print(f"{n} answers -> {args.out}", file=sys.stderr)
    else:
        n = merge_logs(args.logs, args.out)
        print(f"{n} units -> {args.out}", file=sys.stderr)
    return 0
