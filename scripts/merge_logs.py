"""Join the logs of one sweep run in shards (`rrdemo experiment --shard I/N`) into one log.

    PYTHONPATH=. python scripts/merge_logs.py assets/qwen15b/log.jsonl assets/qwen15b/log.2.jsonl \\
        --out assets/qwen15b/log.jsonl

Every finished unit is kept once (from the first log that holds it); unfinished units are left
out, and logs of different sweeps are refused.
"""

from __future__ import annotations

import argparse
import sys

from rrdemo.errors import RRError
from rrdemo.runs.log import merge_logs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("logs", nargs="+", help="the shards' .jsonl logs")
    parser.add_argument("--out", required=True, help="the merged log (may be one of the inputs)")
    args = parser.parse_args(argv)
    try:
        n = merge_logs(args.logs, args.out)
    except RRError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{n} units -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
