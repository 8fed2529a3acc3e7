"""Alembic environment for the leaderboard: runs the recorded migrations on a given connection.

`leaderboard.db.upgrade(engine)` passes its connection in `config.attributes["connection"]`;
a command-line `alembic` run would instead use `LEADERBOARD_DB_URL` via `database_url()`.
"""

from __future__ import annotations

from alembic import context

from leaderboard.db import create_db_engine
from leaderboard.orm import Base

config = context.config
target_metadata = Base.metadata


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite cannot ALTER most things; batch mode copies the table
    )
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    engine = create_db_engine()
    with engine.connect() as own_connection:
        _run(own_connection)
        own_connection.commit()
    engine.dispose()
