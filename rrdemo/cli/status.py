"""`rrdemo status LOG [--json]`: per condition, questions done of planned, failures, tokens, time.

Reads only the log (`rrdemo.runs.status`), so it can watch a sweep that is still running.
"""

from __future__ import annotations

import argparse
import json


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `status` command."""
    parser = subparsers.add_parser(
        "status",
        help="where a run log stands: done / planned, failures, tokens and time per condition",
        description="Per condition of an `rrdemo experiment` log: questions done of planned, "
        "questions stopped midway, trajectories without an answer (and why), votes that decided "
        "nothing, and the decode / prefill tokens and time the finished questions used.",
    )
    parser.add_argument("log", help="the JSONL log written by `rrdemo experiment --out`")
    parser.add_argument("--json", action="store_true", help="one JSON object per condition")
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    """Print the status table (or JSON lines)."""
    from rrdemo.runs.log import read_log
    from rrdemo.runs.status import log_status, render

    statuses = log_status(read_log(args.log))
    if args.json:
        for status in statuses:
            print(json.dumps(status.to_dict(), ensure_ascii=False))
    else:
        print(render(statuses))
    return 0
