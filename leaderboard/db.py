"""The leaderboard database: URL from the environment, SQLite tuning, migrations, retries.

Nothing here runs at import. `create_db_engine` builds the engine (WAL, foreign keys, busy
timeout, `BEGIN IMMEDIATE` so concurrent writers queue instead of failing); `upgrade` brings the
schema to the newest recorded migration (`leaderboard.service.open_leaderboard` does both and
seeds the paper's tables). `run_transaction` opens one transaction per user event and retries
it when SQLite still reports the database as locked, so that error never reaches a user.
Alembic is imported inside the functions that use it: it is slow to import.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from rrdemo.errors import RRError
from rrdemo.paths import data_dir

T = TypeVar("T")

BUSY_TIMEOUT_MS = 30_000  # how long SQLite waits for another writer before giving up
MIGRATIONS_DIR = Path(__file__).with_name("migrations")


def database_url() -> str:
    """`LEADERBOARD_DB_URL`, else `sqlite:///<data_dir>/leaderboard.db` (read when called)."""
    url = os.environ.get("LEADERBOARD_DB_URL", "").strip()
    return url or f"sqlite:///{data_dir() / 'leaderboard.db'}"


def project_checkout() -> Path | None:
    """The source checkout this package runs from (the folder holding pyproject.toml and app.py
    beside `leaderboard/`), or None for an installed copy."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() and (root / "app.py").is_file() else None


def command_line_url() -> str:
    """The database of `python -m leaderboard`, wherever it is run from: `LEADERBOARD_DB_URL`;
    else the data dir when one is configured (`RRDEMO_DATA_DIR`, or a Space's storage); else the
    checkout's own data folder, the one `make run` uses (<checkout>/data/leaderboard.db). An
    installed copy with none of these set is refused: it would make a database in whatever
    folder it ran in."""
    if os.environ.get("LEADERBOARD_DB_URL", "").strip() or os.environ.get("RRDEMO_DATA_DIR"):
        return database_url()
    if os.environ.get("SPACE_ID"):
        return database_url()
    root = project_checkout()
    if root is None:
        raise RRError(
            "No leaderboard database is chosen: set LEADERBOARD_DB_URL (e.g. "
            "sqlite:////home/you/rrdemo/data/leaderboard.db) or RRDEMO_DATA_DIR (the folder "
            "the app keeps its data in); nothing was created."
        )
    (root / "data").mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{root / 'data' / 'leaderboard.db'}"


def _reason(error: Exception) -> str:
    """Why SQLAlchemy could not make an engine, in words."""
    if isinstance(error, ImportError):
        return f"its driver {error.name or 'module'} is not installed"
    if isinstance(error, NoSuchModuleError):
        return "unknown database kind"
    return "it cannot be parsed"


def _is_memory(url: str) -> bool:
    return url in ("sqlite://", "sqlite:///:memory:") or "mode=memory" in url


def create_db_engine(url: str | None = None) -> Engine:
    """An engine for `url` (default `database_url()`), tuned for SQLite when it is SQLite."""
    url = url or database_url()
    if not url.startswith("sqlite"):
        try:
            return create_engine(url, pool_pre_ping=True)
        except (ArgumentError, ImportError) as error:  # the URL itself is not printed: a password
            raise RRError(
                "LEADERBOARD_DB_URL is not a database URL this install can open "
                f"({_reason(error)}); e.g. sqlite:////data/leaderboard.db or "
                "postgresql+psycopg://user:password@host/db with its driver installed"
            ) from None
    connect_args = {"check_same_thread": False, "timeout": BUSY_TIMEOUT_MS / 1000}
    if _is_memory(url):
        # One shared connection, or every checkout would see a fresh empty database.
        engine = create_engine(url, connect_args=connect_args, poolclass=StaticPool)
    else:
        engine = create_engine(url, connect_args=connect_args, pool_size=8, max_overflow=8)
    memory = _is_memory(url)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record) -> None:
        # Let SQLAlchemy's "begin" event issue BEGIN itself (pysqlite would defer it).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection) -> None:
        # Take the write lock up front: two writers never both read, then both try to upgrade.
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _alembic_config():
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Apply the recorded migrations up to `revision` (an empty database goes to the newest)."""
    from alembic import command

    _migrate(engine, command.upgrade, revision)


def downgrade(engine: Engine, revision: str = "base") -> None:
    """Undo migrations down to `revision` (tests use it to check every step is reversible)."""
    from alembic import command

    _migrate(engine, command.downgrade, revision)


def _migrate(engine: Engine, step, revision: str) -> None:
    """Run an alembic command with SQLite's foreign keys off, then check them.

    A migration that changes a parent table's constraints rebuilds it (copy, drop, rename); with
    foreign keys on, dropping the parent would cascade-delete every child row. SQLite's own recipe
    for such changes: keys off outside the transaction, migrate, `foreign_key_check`, keys on.
    """
    config = _alembic_config()
    with engine.connect() as connection:
        # on the DBAPI connection, before SQLAlchemy begins (the pragma is ignored in a transaction)
        raw = connection.connection.dbapi_connection
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            raw.execute("PRAGMA foreign_keys=OFF")
        try:
            config.attributes["connection"] = connection
            step(config, revision)
            if sqlite and connection.exec_driver_sql("PRAGMA foreign_key_check").first():
                connection.rollback()
                raise RuntimeError(f"migrating to {revision} would break foreign keys")
            connection.commit()
        finally:
            if sqlite:
                raw.execute("PRAGMA foreign_keys=ON")


def current_revision(engine: Engine) -> str | None:
    """The migration the database is at (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str:
    """The newest recorded migration."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert head is not None
    return head


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Session factory; objects stay readable after commit (the UI formats them afterwards)."""
    return sessionmaker(engine, expire_on_commit=False)


def _is_lock_error(error: OperationalError) -> bool:
    text = str(error.orig).lower()
    return "locked" in text or "busy" in text


def run_transaction(
    factory: sessionmaker[Session],
    work: Callable[[Session], T],
    *,
    attempts: int = 20,
) -> T:
    """Run `work(session)` in one transaction; retry it while SQLite says the DB is locked.

    `work` must be safe to re-run (the service's functions are: duplicates are found by hash).
    A lock that outlasts every attempt becomes a short `RRError`, never a raw traceback.
    """
    delay = 0.05
    for attempt in range(attempts):
        try:
            with factory.begin() as session:
                return work(session)
        except OperationalError as error:
            if not _is_lock_error(error) or attempt == attempts - 1:
                if _is_lock_error(error):
                    raise RRError("The leaderboard is busy right now; please try again.") from None
                raise
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
    raise AssertionError("unreachable")
