"""`rrdemo report RUN.jsonl [--out DIR]`: the paper's tables (markdown + CSV) and figures (HTML + PNG).

`rrdemo report LOG1 LOG2 ... --pool 3c2t [--out DIR]`: independent runs pooled at one config
(pooled.md / .csv, the forest plot beside the paper's numbers; `rrdemo.report.pool_report`).

A malformed or foreign file is refused with one line on stderr (exit 2) and nothing is written.
"""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `report` command."""
    parser = subparsers.add_parser(
        "report",
        help="turn an experiment log into the paper's tables and figures",
        description="Main table, M scaling, final speaker, K ablation, asymmetric yield and the "
        "accuracy-against-rho plot of an `rrdemo experiment` log, with the paper's numbers beside "
        "the run's wherever a setting matches (paper_beside.md / .csv).",
    )
    parser.add_argument(
        "log", nargs="+", help="the JSONL log written by `rrdemo experiment` (several: --pool)"
    )
    parser.add_argument(
        "--pool",
        metavar="CONFIG",
        help="pool the logs' decisions at CONFIG (e.g. 3c2t): each run's paired row, the runs "
        "pooled (each question once; a log sharing a question with an earlier one is shown, not "
        "pooled) and the forest plot, into --out (default: pool_CONFIG_report beside the first)",
    )
    parser.add_argument("--out", help="output folder (default: <log>_report beside the log)")
    parser.add_argument("--no-png", action="store_true", help="write HTML figures only")
    parser.add_argument(
        "--paired-with",
        metavar="BASE_LOG",
        help="the run this one varies (e.g. its eos_policy, with methods: [RRMaj]): pair this "
        "run's RRMaj with BASE_LOG's MAJ and RRMaj question by question (policies.md)",
    )
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    """Write the report and list the files."""
    from pathlib import Path

    from rrdemo.errors import RRError

    if args.pool:
        from rrdemo.report.pool_report import write_pool_report

        if args.paired_with:
            raise RRError("--pool pairs a log of RRMaj alone with the given log of its condition; "
                          "leave out --paired-with and list both logs")  # fmt: skip
        first = Path(args.log[0])
        out = Path(args.out) if args.out else first.with_name(f"pool_{args.pool}_report")
        for path in write_pool_report([Path(p) for p in args.log], args.pool, out, not args.no_png):
            print(path)
        return 0
    if len(args.log) > 1:
        raise RRError(f"{len(args.log)} logs given: one report is of one log; to pool several "
                      "at one config add --pool CONFIG (e.g. --pool 3c2t)")  # fmt: skip
    args.log = args.log[0]
    from rrdemo.report.write import (
        write_report,  # plotly and the analyses load only for this command
    )

    paired = args.paired_with
    for path in write_report(args.log, args.out, png=not args.no_png, paired_with=paired):
        print(path)
    if args.out is None:
        print("(report written beside the log)", file=sys.stderr)
    return 0
