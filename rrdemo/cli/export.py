"""`rrdemo export RUN.jsonl --submitter NAME [--out FILE]`: the leaderboard submission of a run.

One result row per condition at M = N (MAJ and RRMaj accuracy with 95% intervals), validated
against `leaderboard.schema` before it is written; `python -m leaderboard submit FILE` takes it.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rrdemo.errors import RRError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `export` command."""
    parser = subparsers.add_parser(
        "export",
        help="write the leaderboard submission file of an experiment log",
        description="Build a leaderboard submission (schema v1) from an `rrdemo experiment` log.",
    )
    parser.add_argument("log", help="the JSONL log written by `rrdemo experiment`")
    parser.add_argument("--submitter", required=True, help="name shown on the leaderboard")
    parser.add_argument("--notes", default="", help="free text shown with the submission")
    parser.add_argument("--out", help="output file (default: <log>.submission.json beside the log)")
    parser.add_argument("--force", action="store_true", help="replace an existing output file")
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    """Build, validate, then write atomically; an existing file is kept unless --force."""
    log = Path(args.log)
    out = Path(args.out) if args.out else log.with_name(log.stem + ".submission.json")
    if out.exists() and not args.force:
        raise RRError(f"{out} already exists; pass --force to replace it or choose another --out")
    data = build_submission(log, args.submitter, args.notes)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".export-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, out)
    print(out)
    return 0


def build_submission(log_path: Path | str, submitter: str, notes: str = "") -> dict[str, Any]:
    """A leaderboard submission (schema v2: rows name their adversary strategy) with one result
    row per condition, at M = N, validated by `leaderboard.schema` before it is returned."""
    import rrdemo  # noqa: PLC0415
    from leaderboard.schema import SCHEMA_VERSION, validate_submission  # noqa: PLC0415
    from rrdemo.adversary_report import main_table_by_adversary  # noqa: PLC0415
    from rrdemo.runs.log import read_run  # noqa: PLC0415

    run = read_run(log_path)
    rows = main_table_by_adversary(run.outcomes)
    lookup = {
        (c["ensemble"], c["task"], c["strength"], c["k"], c["max_tokens"], c["n"], c["c"])
        + (c.get("adversary", "static"),): c
        for c in run.conditions.values()
    }
    results = []
    for adversary, row in rows:
        for cell in [row.ceiling, *row.cells, row.floor]:
            if cell is None:
                continue
            cond = lookup[
                (row.ensemble, row.task, row.strength, row.k, row.max_tokens, row.n, cell.c)
                + (adversary,)
            ]
            agents = cond["config"]["agents"]
            results.append(
                {
                    "model": agents[0]["model"],
                    "model_revision": agents[0].get("revision"),
                    "agent_models": [a["model"] for a in agents],
                    "corrupted_agents": [i for i, a in enumerate(agents) if a["corrupted"]],
                    "dataset": row.task,
                    "strength": row.strength,
                    "n_agents": row.n,
                    "n_corrupted": cell.c,
                    "n_truthful": row.n - cell.c,
                    "k": row.k,
                    "m": row.m,
                    "max_tokens": row.max_tokens,
                    "n_questions": cell.maj.n_questions,
                    "maj_accuracy": _frac(cell.maj.mean),
                    "rrmaj_accuracy": _frac(cell.rrmaj.mean),
                    "maj_ci": [_frac(cell.maj.lo), _frac(cell.maj.hi)],
                    "rrmaj_ci": [_frac(cell.rrmaj.lo), _frac(cell.rrmaj.hi)],
                    "config_hash": cond["config_hash"]
                    if "config_hash" in cond
                    else cond["key"].split(":")[-1],
                    "adversary": adversary,
                }
            )
    data = {
        "schema_version": SCHEMA_VERSION,
        "submitter": submitter,
        "notes": notes,
        "source": "local_run",
        "rrdemo_version": rrdemo.__version__,
        # when the run's log was last written: exporting one finished run twice gives one file
        "created": datetime.fromtimestamp(Path(log_path).stat().st_mtime, timezone.utc).isoformat(
            timespec="seconds"
        ),
        "results": results,
    }
    validate_submission(json.loads(json.dumps(data)))
    return data


def _frac(x: float) -> float:
    return float(min(1.0, max(0.0, round(x, 6))))
