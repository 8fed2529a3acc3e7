"""`rrdemo status LOG [LOG ...] [--json]`: per condition, questions done of planned, failures,
tokens, time.

Reads only the log (`rrdemo.runs.status`), so it can watch a sweep that is still running. The logs
of one sweep run in shards are read together (`rrdemo.runs.status.shards_status`): one shard alone
shows the whole plan as planned, so its own share looks unfinished for ever.
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
    parser.add_argument(
        "logs",
        nargs="+",
        metavar="log",
        help="the JSONL log written by `rrdemo experiment --out`; several logs of one sweep "
        "(its shards) are read as one run",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per condition")
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    """Print the status table (or JSON lines)."""
    from rrdemo.runs.status import render, shards_status

    statuses = shards_status(args.logs)
    if args.json:
        for status in statuses:
            print(json.dumps(status.to_dict(), ensure_ascii=False))
    else:
        from rrdemo.rates import log_time_left

        print(render(statuses))
        print(log_time_left(args.logs))  # the units left, timed from the logs' own pace
    return 0
