"""Command line for the leaderboard: init, submit, list, approve / reject / delete.

Exit codes: 0 done (a duplicate submission counts as done), 2 rejected or bad input, with one
reason per line on stderr and no traceback. The database comes from `LEADERBOARD_DB_URL`; submissions
and admin actions are journalled like the app's (`leaderboard.hub_sync`), so a rebuild keeps them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from leaderboard import hub_sync, service
from leaderboard.columns import CLI_COLUMNS, COLUMNS, BoardRow
from leaderboard.db import run_transaction
from rrdemo.errors import RRError
from rrdemo.report.submission import Submission, SubmissionRejected, parse_submission


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m leaderboard",
        description="The robustness leaderboard (MAJ vs RRMaj under adversarial majorities).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("init", help="create or upgrade the database and seed the paper's tables")
    commands.add_parser("schema", help="print the submission file's JSON schema")
    submit = commands.add_parser(
        "submit", help="submit a result file (JSON, schema version 1 or 2)"
    )
    submit.add_argument("file", type=Path)
    listing = commands.add_parser("list", help="print the approved rows")
    listing.add_argument("--format", choices=("json", "table"), default="table")
    listing.add_argument("--all", action="store_true", help="every row, any status")
    for action in ("approve", "reject", "delete"):
        admin = commands.add_parser(action, help=f"{action} a submission (admin token needed)")
        admin.add_argument("submission_id", type=int)
        admin.add_argument(
            "--token", default=None, help="admin token (default: $LEADERBOARD_ADMIN_TOKEN)"
        )
        admin.add_argument("--reason", default="", help="recorded in the audit log")
    return parser


def _row_dict(row: BoardRow) -> dict[str, object]:
    return {c.name: c.value(row) for c in COLUMNS}


def _table(rows: list[dict[str, object]]) -> str:
    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}"
        return "" if value is None else str(value).replace("\n", " ")[:40]

    names = [c.name for c in CLI_COLUMNS]
    cells = [[cell(r[name]) for name in names] for r in rows]
    widths = [max([len(n)] + [len(line[i]) for line in cells]) for i, n in enumerate(names)]
    lines = ["  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(lines)


def run(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run the command; errors propagate (see `main`)."""
    args = _parser().parse_args(argv)
    if args.command == "schema":
        print(json.dumps(Submission.model_json_schema(), indent=1))
        return 0
    factory = service.open_leaderboard()
    if args.command == "init":
        print("The leaderboard database is at the newest schema and holds the paper's tables.")
        return 0
    if args.command == "submit":
        try:
            raw = args.file.read_bytes()
        except OSError as error:
            raise RRError(f"Cannot read {args.file}: {error.strerror}") from None
        outcome = hub_sync.submit_recorded(hub_sync.local_store(factory), parse_submission(raw))
        print(outcome.message)
        return 0
    if args.command == "list":
        rows = run_transaction(factory, lambda s: service.board_rows(s, include_all=args.all))
        dicts = [_row_dict(r) for r in rows]
        print(json.dumps(dicts, indent=1) if args.format == "json" else _table(dicts))
        return 0
    token = args.token if args.token is not None else os.environ.get("LEADERBOARD_ADMIN_TOKEN")
    store = hub_sync.local_store(factory)
    print(hub_sync.moderate_recorded(store, args.submission_id, args.command, token, args.reason))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: exit 0 on success, 2 with the reasons on stderr when refused or rejected."""
    try:
        return run(argv)
    except SubmissionRejected as error:
        print("Rejected:", file=sys.stderr)
        for reason in error.reasons:
            print(reason, file=sys.stderr)
        return 2
    except RRError as error:
        print(str(error), file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `... list | head`: the reader left, nothing is wrong
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
