"""`rrdemo report RUN.jsonl [--out DIR]`: the paper's tables (markdown + CSV) and figures (HTML + PNG).

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
    parser.add_argument("log", help="the JSONL log written by `rrdemo experiment`")
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
    from rrdemo.report.write import (
        write_report,  # plotly and the analyses load only for this command
    )

    paired = args.paired_with
    for path in write_report(args.log, args.out, png=not args.no_png, paired_with=paired):
        print(path)
    if args.out is None:
        print("(report written beside the log)", file=sys.stderr)
    return 0
