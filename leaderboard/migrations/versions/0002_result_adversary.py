"""Results record the adversary strategy (submission schema 2): one nullable column.

Revision ID: 0002_result_adversary
Revises: 0001_initial
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_result_adversary"
down_revision = "0001_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # batch mode: SQLite cannot ALTER most things in place; adding a nullable column it can,
    # and batch keeps the migration portable to databases that need the copy-and-move.
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("adversary", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("adversary")
