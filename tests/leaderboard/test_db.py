"""The leaderboard database: its URL, SQLite's settings, the migrations up to the ORM's schema and
back, and transactions that wait out a locked database instead of failing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from sqlalchemy.exc import OperationalError

from leaderboard import db
from leaderboard.db import (
    create_db_engine,
    current_revision,
    database_url,
    downgrade,
    head_revision,
    make_sessionmaker,
    run_transaction,
    upgrade,
)
from leaderboard.orm import Base
from rrdemo.errors import RRError

TABLES = {"submissions", "results", "audit_log", "alembic_version"}


def _locked(message: str = "database is locked") -> OperationalError:
    return OperationalError("INSERT ...", {}, sqlite3.OperationalError(message))


@pytest.fixture
def factory():
    engine = create_db_engine("sqlite://")
    yield make_sessionmaker(engine)
    engine.dispose()


@pytest.fixture
def no_waiting(monkeypatch):
    waits: list[float] = []
    monkeypatch.setattr(db.time, "sleep", waits.append)
    return waits


@pytest.mark.parametrize("where", ["memory", "file"])
def test_migrations_bring_an_empty_database_to_the_orm_schema(where: str, tmp_path: Path) -> None:
    url = "sqlite://" if where == "memory" else f"sqlite:///{tmp_path / 'empty.db'}"
    engine = create_db_engine(url)
    assert current_revision(engine) is None
    assert set(inspect(engine).get_table_names()) == set()

    upgrade(engine)
    assert current_revision(engine) == head_revision()
    assert set(inspect(engine).get_table_names()) == TABLES
    with engine.connect() as connection:
        # The recorded migrations and the ORM classes describe the same schema.
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []

    upgrade(engine)  # a second upgrade is a no-op
    downgrade(engine, "base")
    assert set(inspect(engine).get_table_names()) == {"alembic_version"}
    upgrade(engine)
    assert current_revision(engine) == head_revision()
    engine.dispose()


def test_file_database_uses_wal_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    engine = create_db_engine(f"sqlite:///{tmp_path / 'x.db'}")
    with engine.connect() as connection:
        assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert connection.execute(text("PRAGMA busy_timeout")).scalar() >= 1000
    engine.dispose()


def test_database_url_is_read_from_the_environment_when_called(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LEADERBOARD_DB_URL", raising=False)
    monkeypatch.setenv("RRDEMO_DATA_DIR", str(tmp_path / "d1"))
    assert database_url() == f"sqlite:///{tmp_path / 'd1' / 'leaderboard.db'}"
    monkeypatch.setenv("LEADERBOARD_DB_URL", "sqlite:///elsewhere.db")
    assert database_url() == "sqlite:///elsewhere.db"


def test_an_in_memory_database_is_one_database_for_every_session(factory) -> None:
    with factory.begin() as session:
        session.execute(text("CREATE TABLE t (x INTEGER)"))
        session.execute(text("INSERT INTO t VALUES (7)"))
    with factory() as other:
        assert other.execute(text("SELECT x FROM t")).scalar() == 7


def test_a_transaction_is_retried_while_the_database_is_locked(factory, no_waiting) -> None:
    attempts = []

    def work(session):
        attempts.append(session)
        if len(attempts) < 3:
            raise _locked("database is locked" if len(attempts) == 1 else "database is busy")
        return "stored"

    assert run_transaction(factory, work) == "stored"
    assert len(attempts) == 3 and no_waiting == sorted(no_waiting) and no_waiting[0] > 0


def test_a_lock_that_outlasts_every_attempt_is_a_short_message(factory, no_waiting) -> None:
    def work(session):
        raise _locked()

    with pytest.raises(RRError, match="leaderboard is busy right now"):
        run_transaction(factory, work, attempts=4)
    assert len(no_waiting) == 3 and max(no_waiting) <= 1.0  # backoff, capped at a second


def test_other_database_errors_are_not_retried(factory, no_waiting) -> None:
    attempts = []

    def work(session):
        attempts.append(session)
        raise _locked("no such table: results")

    with pytest.raises(OperationalError, match="no such table"):
        run_transaction(factory, work)
    assert len(attempts) == 1 and no_waiting == []
