"""`rrdemo export RUN.jsonl --submitter NAME [--out FILE]`: the leaderboard submission of a run;
`rrdemo export RUN.jsonl --dataset [--out DIR]`: its trajectories as a Hugging Face dataset.

One result row per condition at M = N (MAJ and RRMaj accuracy with 95% intervals), built and
validated by `rrdemo.report.submission` before it is written; `python -m leaderboard submit FILE` takes it.
The dataset (parquet and a card, `rrdemo.report.dataset`) loads with `datasets.load_dataset(DIR)`.
"""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from pathlib import Path

from rrdemo.errors import RRError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `export` command."""
    parser = subparsers.add_parser(
        "export",
        help="write the leaderboard submission (or, with --dataset, a dataset) of an experiment log",
        description="Build a leaderboard submission (schema v4: each condition's MAJ and RRMaj accuracy as "
        "the run decided its questions) from an `rrdemo experiment` log, "
        "or with --dataset its trajectories, answers and votes as a Hugging Face dataset.",
    )
    parser.add_argument("log", help="the JSONL log written by `rrdemo experiment`")
    parser.add_argument(
        "--submitter", help="name shown on the leaderboard (needed for a submission)"
    )
    parser.add_argument("--notes", default="", help="free text shown with the submission")
    parser.add_argument(
        "--dataset",
        action="store_true",
        help="write a dataset folder (parquet + README.md card) instead of a submission",
    )
    parser.add_argument(
        "--out",
        help="output file (default: <log>.submission.json beside the log); with --dataset a "
        "folder (default: <log>_dataset beside the log)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing output")
    parser.add_argument(
        "--source",
        choices=("local_run", "rrdemo"),
        default="local_run",
        help="local_run (default); rrdemo only for a finished sweep this project commits as "
        "leaderboard/project_runs/<name>/submission.json, which every board seeds (nobody can "
        "submit it)",
    )
    parser.add_argument(
        "--created",
        type=_created,
        help="when the run finished, YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS in UTC (default: when the "
        "log was last written, which a git checkout does not keep)",
    )
    parser.set_defaults(func=handler)


def _created(value: str) -> datetime:
    """A date or time in UTC, for --created."""
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a date; give YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (UTC)"
        ) from None
    if when.tzinfo is not None and when.utcoffset():
        raise argparse.ArgumentTypeError(f"{value!r} is not in UTC; give the time in UTC")
    return when.replace(tzinfo=timezone.utc)


def handler(args: argparse.Namespace) -> int:
    """Build, validate, then write atomically; an existing file is kept unless --force."""
    # Here, not at the top: every `rrdemo` command imports this module to register it, and the
    # builder pulls in pydantic and the run reader's analysis stack.
    from rrdemo.report.board import check_finished, write_submission

    log = Path(args.log)
    if args.dataset:
        return _dataset(log, args)
    if not args.submitter:
        raise RRError(
            "--submitter NAME is needed for a leaderboard submission (the name the board shows); "
            "--dataset writes the trajectories as a dataset instead"
        )
    out = Path(args.out) if args.out else log.with_name(log.stem + ".submission.json")
    if args.source == "rrdemo":
        check_finished(log)
    if out.exists() and not args.force:
        raise RRError(f"{out} already exists; pass --force to replace it or choose another --out")
    print(write_submission(log, out, args.submitter, args.notes, args.source, args.created))
    return 0


def _dataset(log: Path, args: argparse.Namespace) -> int:
    """Write the dataset folder and list its files."""
    from rrdemo.report.dataset import write_dataset

    out = Path(args.out) if args.out else log.with_name(log.stem + "_dataset")
    for path in write_dataset(log, out, replace=args.force):
        print(path)
    return 0
