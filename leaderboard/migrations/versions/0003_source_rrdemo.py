"""Submissions may have source "rrdemo": this project's committed sweeps, seeded like the paper's.

Revision ID: 0003_source_rrdemo
Revises: 0002_result_adversary
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_source_rrdemo"
down_revision = "0002_result_adversary"
branch_labels = None
depends_on = None


def _sources(*names: str) -> sa.Enum:
    return sa.Enum(
        *names, native_enum=False, create_constraint=True, name="submission_source", length=16
    )


OLD = _sources("paper", "local_run", "uploaded")
NEW = _sources("paper", "rrdemo", "local_run", "uploaded")


def upgrade() -> None:
    # SQLite cannot change a CHECK constraint in place: batch mode copies the table.
    with op.batch_alter_table("submissions", recreate="always") as batch:
        batch.alter_column("source", existing_type=OLD, type_=NEW, existing_nullable=False)


def downgrade() -> None:
    op.execute(
        "DELETE FROM results WHERE submission_id IN (SELECT id FROM submissions WHERE source = 'rrdemo')"
    )
    op.execute("DELETE FROM submissions WHERE source = 'rrdemo'")
    with op.batch_alter_table("submissions", recreate="always") as batch:
        batch.alter_column("source", existing_type=NEW, type_=OLD, existing_nullable=False)
