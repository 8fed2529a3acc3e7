"""Valid leaderboard documents and rows to start a test from (override any field), and a
checksum of the whole database. Plain builders, imported by the tests that need them: several
build their cases when the module is collected (parametrize lists), where fixtures cannot reach.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from leaderboard.columns import BoardRow
from leaderboard.orm import Base
from rrdemo.report.submission import SCHEMA_VERSION


def result_row(**overrides: Any) -> dict[str, Any]:
    """A valid result row (3c2t, N = 5) as JSON-ready data; override any field."""
    row: dict[str, Any] = {
        "model": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "model_revision": "main",
        "agent_models": ["HuggingFaceTB/SmolLM2-135M-Instruct"] * 5,
        "corrupted_agents": [0, 1, 2],
        "dataset": "gsm8k",
        "strength": "moderate",
        "n_agents": 5,
        "n_corrupted": 3,
        "n_honest": 2,
        "k": 100,
        "m": 5,
        "max_tokens": 512,
        "n_questions": 40,  # the fewest a ranked row stands on
        "maj_accuracy": 0.25,
        "rrmaj_accuracy": 0.5,
        "maj_ci": [0.125, 0.40625],
        "rrmaj_ci": None,
        "config_hash": "0123abcd",
        "estimator": "decisions",
    }
    row.update(overrides)
    return row


def submission(rows: list[dict[str, Any]] | None = None, **overrides: Any) -> dict[str, Any]:
    """A valid submission document; override top-level fields."""
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "submitter": "alice",
        "notes": "local run on CPU",
        "source": "local_run",
        "provenance": "runs/small.jsonl",
        "rrdemo_version": "0.1.0",
        "created": "2025-06-01T12:00:00+00:00",
        "results": rows if rows is not None else [result_row()],
    }
    doc.update(overrides)
    return copy.deepcopy(doc)


def encode(doc: dict[str, Any]) -> bytes:
    """The document as a UTF-8 JSON file's bytes."""
    return json.dumps(doc).encode("utf-8")


def board_row(model: str, c: int, t: int, maj: float | None, rr: float | None, **kw: Any) -> Any:
    """A `BoardRow` of `model` at c corrupted and t honest agents; override any field."""
    fields: dict[str, Any] = dict(
        submission_id=1, status="approved", source="local_run", submitter="s", notes="",
        model=model, dataset="gsm8k", strength="moderate", n_agents=c + t, n_corrupted=c,
        n_honest=t, k=100, m=5, max_tokens=None, n_questions=100, maj_accuracy=maj,
        rrmaj_accuracy=rr, estimator="decisions",
    )  # fmt: skip
    fields.update(kw)
    return BoardRow(**fields)


# One model's six configurations at N = 5, with the Delta of each (hand-computed expectations).
MODEL_A = [
    board_row("org/a", 0, 5, 0.90, 0.90),  # ceiling: in neither band
    board_row("org/a", 1, 4, 0.80, 0.70),  # Delta -0.10
    board_row("org/a", 2, 3, 0.60, 0.65),  # Delta +0.05
    board_row("org/a", 3, 2, 0.20, 0.60),  # Delta +0.40
    board_row("org/a", 4, 1, 0.10, 0.30),  # Delta +0.20
    board_row("org/a", 5, 0, 0.05, 0.05),  # floor: in neither band
]


def db_checksum(session: Session) -> tuple[dict[str, int], str]:
    """Row counts per table and a sha256 over every row of every table (plus alembic_version)."""
    counts: dict[str, int] = {}
    digest = hashlib.sha256()
    for table in Base.metadata.sorted_tables:
        rows = session.execute(select(table).order_by(*table.primary_key.columns)).all()
        counts[table.name] = len(rows)
        for row in rows:
            digest.update(repr(tuple(row)).encode())
    version = session.execute(text("SELECT version_num FROM alembic_version")).all()
    digest.update(repr(version).encode())
    return counts, digest.hexdigest()


def paper_row_count() -> int:
    """How many rows the paper's tables seed into every board (both strengths)."""
    from leaderboard.paper_seed import TABLES, paper_submission

    return sum(len(paper_submission(strength).results) for strength in TABLES)
