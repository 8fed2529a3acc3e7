"""`rrdemo merge-logs LOG... --out LOG`: join the logs of one sweep run in shards into one log.

    rrdemo merge-logs assets/qwen15b/log.jsonl assets/qwen15b/log.2.jsonl \\
        --out assets/qwen15b/log.jsonl

Every finished unit is kept once (from the first log that holds it); unfinished units are left
out, and logs of different sweeps are refused (`rrdemo.runs.log.merge_logs`).
"""

from __future__ import annotations

import argparse
import sys

from rrdemo.runs.log import merge_logs


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `merge-logs` command."""
    parser = subparsers.add_parser(
        "merge-logs",
        help="join the logs of a sweep run in shards (`experiment --shard I/N`) into one",
        description="Join the logs of one sweep run in shards or on several machines: every "
        "finished unit once, unfinished units left out; logs of different sweeps are refused.",
    )
    parser.add_argument("logs", nargs="+", help="the shards' .jsonl logs")
    parser.add_argument("--out", required=True, help="the merged log (may be one of the inputs)")
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    """Merge, then say how many units the merged log holds."""
    n = merge_logs(args.logs, args.out)
    print(f"{n} units -> {args.out}", file=sys.stderr)
    return 0
