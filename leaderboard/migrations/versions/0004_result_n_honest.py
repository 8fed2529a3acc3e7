"""Results name t, the honest agents, `n_honest` (submission schema 3); seeded submissions are
seeded again.

The column and its CHECK constraint (c + t = N) are renamed; every stored value stays. The
submissions the board seeds itself (source "paper" and "rrdemo") are derived from the code and
the committed sweeps, and their content hash changes with the schema: they are removed here, so
the next `leaderboard.service.seed_board` stores them once in the current schema instead of a
second time beside the old copies (the downgrade does the same for the older code). User
submissions and the audit log are kept as they are.

Revision ID: 0004_result_n_honest
Revises: 0003_source_rrdemo
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_result_n_honest"
down_revision = "0003_source_rrdemo"
branch_labels = None
depends_on = None

SEEDED = "(SELECT id FROM submissions WHERE source IN ('paper', 'rrdemo'))"


def _rename(old: str, new: str) -> None:
    # SQLite cannot rename a column that a CHECK constraint names: batch mode copies the table.
    with op.batch_alter_table("results", recreate="always") as batch:
        batch.drop_constraint("ck_results_c_plus_t", type_="check")
        batch.alter_column(old, new_column_name=new, existing_type=sa.Integer(), nullable=False)
        batch.create_check_constraint("ck_results_c_plus_t", f"n_corrupted + {new} = n_agents")


def _drop_seeded() -> None:
    op.execute(f"DELETE FROM results WHERE submission_id IN {SEEDED}")
    op.execute(f"DELETE FROM submissions WHERE id IN {SEEDED}")


def upgrade() -> None:
    _rename("n_truthful", "n_honest")
    _drop_seeded()


def downgrade() -> None:
    _rename("n_honest", "n_truthful")
    _drop_seeded()  # the older code seeds its own schema again
