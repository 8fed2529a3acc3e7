"""Command line for the leaderboard: init, submit, list, rank, approve / reject / delete.

`list` and `rank` filter the rows as the app's board does (task, strength, config, model, rho
band, source: `leaderboard.ranking.filter_rows`), and print or write as CSV what the app shows:
the row table and the per-model ranking, with the pooled lines after it (`leaderboard.present`).

Exit codes: 0 done (a duplicate submission counts as done), 2 rejected or bad input (a file that
cannot be read or written, a database URL that cannot be opened included), with one reason per
line on stderr and no traceback. The database is `leaderboard.db.command_line_url`: the app's
when run from a checkout, wherever the command runs (never a new ./data); submissions and admin
actions are journalled like the app's (`leaderboard.hub_sync`), so a rebuild keeps them.
`list` leaves superseded rows out unless --superseded; `rank` never reads them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from leaderboard import hub_sync, present, service
from leaderboard.columns import CLI_COLUMNS, COLUMNS, BoardRow, Column
from leaderboard.db import command_line_url, run_transaction
from leaderboard.ranking import RHO_BANDS, filter_rows, pooled_lines, rank_models
from rrdemo.errors import RRError
from rrdemo.report.submission import (
    ALL_SOURCES,
    DATASETS,
    MAX_FILE_BYTES,
    SCHEMA_VERSION,
    STRENGTHS,
    Submission,
    SubmissionRejected,
    parse_submission,
)

# --band words, each the board's rho-band choice (`RHO_BANDS`) whose text starts with it
BANDS = {choice.split()[0]: choice for choice in RHO_BANDS[1:]}


def _config(text: str) -> str:
    """A `3c2t` label, as --config takes it."""
    if not re.fullmatch(r"\d+c\d+t", text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a corruption setting; give c corrupted and t honest agents as "
            "the paper writes them, e.g. 3c2t"
        )
    return text


def _add_filters(parser: argparse.ArgumentParser) -> None:
    """The board's filters; each one left out means every value."""
    parser.add_argument("--task", choices=DATASETS, help="only this benchmark")
    parser.add_argument("--strength", choices=STRENGTHS, help="only this injection strength")
    parser.add_argument("--config", type=_config, help="only this corruption setting, e.g. 3c2t")
    parser.add_argument("--model", help="only this model, named as the board shows it")
    parser.add_argument("--band", choices=tuple(BANDS), help="only rows in this rho band")
    parser.add_argument("--source", choices=ALL_SOURCES, help="only rows from this source")
    parser.add_argument("--csv", type=Path, help="also write the table to this CSV file")
    parser.add_argument(
        "--superseded",
        action="store_true",
        help="also list superseded rows, labelled (the ranking never reads them)",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m leaderboard",
        description="The robustness leaderboard (MAJ vs RRMaj under adversarial majorities).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("init", help="create or upgrade the database and seed the paper's tables")
    commands.add_parser("schema", help="print the submission file's JSON schema")
    what = (
        f"submit a result file (JSON, schema version {SCHEMA_VERSION}: `rrdemo export` writes it)"
    )
    submit = commands.add_parser("submit", help=what, description=what)
    submit.add_argument("file", type=Path, help="the submission file")
    listing = commands.add_parser("list", help="print the approved rows")
    listing.add_argument("--format", choices=("json", "table"), default="table")
    listing.add_argument("--all", action="store_true", help="every row, any status")
    _add_filters(listing)
    ranking = commands.add_parser(
        "rank", help="rank the models as the app does (RRMaj accuracy under majority corruption)"
    )
    ranking.add_argument("--format", choices=("json", "table"), default="table")
    _add_filters(ranking)
    for action in ("approve", "reject", "delete", "supersede"):
        what = (
            "mark a submission's rows superseded (--reason required; never ranked again)"
            if action == "supersede"
            else f"{action} a submission"
        )
        admin = commands.add_parser(action, help=f"{what} (admin token needed)")
        admin.add_argument("submission_id", type=int)
        admin.add_argument(
            "--token", default=None, help="admin token (default: $LEADERBOARD_ADMIN_TOKEN)"
        )
        admin.add_argument(
            "--reason", default="", help="recorded in the audit log (a superseded row shows it)"
        )
    return parser


def _row_dict(row: BoardRow) -> dict[str, object]:
    return {c.name: c.value(row) for c in COLUMNS}


def _table(rows: list[dict[str, object]]) -> str:
    def cell(column: Column, value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}"
        if value is None:
            return present.UNSTATED if column.display in ("stated", "estimator") else ""
        return str(value).replace("\n", " ")[:40]

    names = [c.name for c in CLI_COLUMNS]
    cells = [[cell(c, r[c.name]) for c in CLI_COLUMNS] for r in rows]
    widths = [max([len(n)] + [len(line[i]) for line in cells]) for i, n in enumerate(names)]
    lines = ["  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)) for line in cells]
    return "\n".join(lines)


def _filtered(factory, args: argparse.Namespace, include_all: bool = False) -> list[BoardRow]:
    """The board's rows under the command's filters; RRError naming the models held when
    --model matches none."""
    rows = run_transaction(factory, lambda s: service.board_rows(s, include_all=include_all))
    if args.model is not None and all(r.model != args.model for r in rows):
        held = ", ".join(sorted({r.model for r in rows})) or "none"
        raise RRError(f"no row has the model {args.model!r}; the board's models: {held}")
    rows = filter_rows(
        rows,
        dataset=args.task,
        strength=args.strength,
        config=args.config,
        model=args.model,
        rho_band=BANDS.get(args.band),
        source=args.source,
        superseded=args.superseded,
    )
    if not rows:
        print("No row matches these filters.", file=sys.stderr)
    return rows


def run(argv: Sequence[str] | None = None) -> int:
    """Parse `argv` and run the command; errors propagate (see `main`)."""
    args = _parser().parse_args(argv)
    if args.command == "schema":
        print(json.dumps(Submission.model_json_schema(), indent=1))
        return 0
    factory = service.open_leaderboard(command_line_url())
    if args.command == "init":
        print("The leaderboard database is at the newest schema and holds the paper's tables.")
        return 0
    if args.command == "submit":
        try:
            with args.file.open("rb") as handle:  # no further than the limit: /dev/zero ends
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError as error:
            raise RRError(f"Cannot read {args.file}: {error.strerror}") from None
        if len(raw) > MAX_FILE_BYTES:
            raise RRError(f"{args.file} is larger than the limit of {MAX_FILE_BYTES} bytes (1 MiB)")
        outcome = hub_sync.submit_recorded(hub_sync.local_store(factory), parse_submission(raw))
        print(outcome.message)
        return 0
    if args.command == "list":
        rows = _filtered(factory, args, include_all=args.all)
        if args.csv:
            present.write_csv(rows, args.csv)
        dicts = [_row_dict(r) for r in rows]
        print(json.dumps(dicts, indent=1) if args.format == "json" else _table(dicts))
        return 0
    if args.command == "rank":
        rows = _filtered(factory, args)
        scores = rank_models(rows)
        if args.csv:
            present.write_ranking_csv(scores, args.csv)
        if args.format == "json":
            print(present.ranking_frame(scores).to_json(orient="records", indent=1))
        else:
            print(present.ranking_text(scores, pooled_lines(rows)))
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
    except OSError as error:  # a --csv file that cannot be written: its path and why
        detail = f"{error.filename}: {error.strerror}" if error.filename else str(error)
        print(f"Cannot write or read {detail}", file=sys.stderr)
        return 2
