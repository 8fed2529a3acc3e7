"""A row of the run's decisions may carry its paired counts: the questions only MAJ and only RRMaj
got right, which the board's intervals resample (the question sampling behind the row).

Two nullable columns (results.maj_only, results.rrmaj_only): rows stored before keep NULL, "not
known", and the board gives their lines no question-sampling interval. The project's own
submissions (source "rrdemo") now carry the counts, so their content hashes change: they are
removed here and `leaderboard.service.seed_board` stores them once in the new form (the downgrade
removes them too, for the older code to seed its own copies).

Revision ID: 0007_result_paired_counts
Revises: 0006_row_estimator_provenance
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007_result_paired_counts"
down_revision = "0006_row_estimator_provenance"
branch_labels = None
depends_on = None

SEEDED = "(SELECT id FROM submissions WHERE source = 'rrdemo')"


def _drop_seeded() -> None:
    op.execute(f"DELETE FROM results WHERE submission_id IN {SEEDED}")
    op.execute(f"DELETE FROM submissions WHERE id IN {SEEDED}")


def upgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("maj_only", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("rrmaj_only", sa.Integer(), nullable=True))
    _drop_seeded()


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        batch.drop_column("rrmaj_only")
        batch.drop_column("maj_only")
    _drop_seeded()
