"""Rows say what they stand on: the estimator of their accuracies, whether they are superseded
(and why), the provenance of their submission; an admin may mark a submission superseded.

Three nullable columns (results.estimator, results.superseded, submissions.provenance): rows
stored before keep NULL, "not stated", and the board never ranks a row whose estimator is not
stated. The audit log's action check admits "supersede". The seeded submissions (sources "paper"
and "rrdemo") now state their estimator and provenance, so their content hashes change: they are
removed here and `leaderboard.service.seed_board` stores them once in the new form (the
downgrade removes them too, for the older code to seed its own copies).

Revision ID: 0006_row_estimator_provenance
Revises: 0005_result_prompt_style_eos
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_row_estimator_provenance"
down_revision = "0005_result_prompt_style_eos"
branch_labels = None
depends_on = None

SEEDED = "(SELECT id FROM submissions WHERE source IN ('paper', 'rrdemo'))"


def _actions(*names: str) -> sa.Enum:
    return sa.Enum(
        *names, native_enum=False, create_constraint=True, name="audit_action", length=16
    )


OLD = _actions("approve", "reject", "delete")
NEW = _actions("approve", "reject", "delete", "supersede")


def _drop_seeded() -> None:
    op.execute(f"DELETE FROM results WHERE submission_id IN {SEEDED}")
    op.execute(f"DELETE FROM submissions WHERE id IN {SEEDED}")


def upgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("estimator", sa.String(16), nullable=True))
        batch.add_column(sa.Column("superseded", sa.Text(), nullable=True))
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("provenance", sa.String(300), nullable=True))
    # SQLite cannot change a CHECK constraint in place: batch mode copies the table.
    with op.batch_alter_table("audit_log", recreate="always") as batch:
        batch.alter_column("action", existing_type=OLD, type_=NEW, existing_nullable=False)
    _drop_seeded()


def downgrade() -> None:
    op.execute("DELETE FROM audit_log WHERE action = 'supersede'")
    with op.batch_alter_table("audit_log", recreate="always") as batch:
        batch.alter_column("action", existing_type=NEW, type_=OLD, existing_nullable=False)
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("provenance")
    with op.batch_alter_table("results") as batch:
        batch.drop_column("superseded")
        batch.drop_column("estimator")
    _drop_seeded()
