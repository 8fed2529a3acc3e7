"""Shared fixtures and builders for the leaderboard tests (imported by tests/test_leaderboard_*).

Every test gets its own SQLite file under tmp_path through `LEADERBOARD_DB_URL`, its own data
dir, no admin token unless it sets one, and the hub offline.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, text
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.db import open_leaderboard
from leaderboard.models import Base


@pytest.fixture
def lb_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point the leaderboard at a fresh SQLite file; returns its URL."""
    monkeypatch.setenv("RRDEMO_DATA_DIR", str(tmp_path / "data"))
    url = f"sqlite:///{tmp_path / 'leaderboard.db'}"
    monkeypatch.setenv("LEADERBOARD_DB_URL", url)
    monkeypatch.delenv("LEADERBOARD_ADMIN_TOKEN", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return url


@pytest.fixture
def factory(lb_env: str) -> Iterator[sessionmaker[Session]]:
    """An opened leaderboard (schema at head, paper seeded) on the test's database."""
    made = open_leaderboard(lb_env)
    yield made
    made.kw["bind"].dispose()


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
        "n_truthful": 2,
        "k": 100,
        "m": 5,
        "max_tokens": 512,
        "n_questions": 32,
        "maj_accuracy": 0.25,
        "rrmaj_accuracy": 0.5,
        "maj_ci": [0.125, 0.40625],
        "rrmaj_ci": None,
        "config_hash": "0123abcd",
    }
    row.update(overrides)
    return row


def submission(rows: list[dict[str, Any]] | None = None, **overrides: Any) -> dict[str, Any]:
    """A valid submission document; override top-level fields."""
    doc: dict[str, Any] = {
        "schema_version": 1,
        "submitter": "alice",
        "notes": "local run on CPU",
        "source": "local_run",
        "rrdemo_version": "0.1.0",
        "created": "2025-06-01T12:00:00+00:00",
        "results": rows if rows is not None else [result_row()],
    }
    doc.update(overrides)
    return copy.deepcopy(doc)


def encode(doc: dict[str, Any]) -> bytes:
    """The document as a UTF-8 JSON file's bytes."""
    return json.dumps(doc).encode("utf-8")


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
