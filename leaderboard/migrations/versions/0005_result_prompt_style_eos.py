"""Results record the prompt style and the end-of-sequence policy of their run: two nullable
columns; this project's seeded sweeps are seeded again.

A row that does not state them keeps NULL (and its content hash: `Submission.canonical_json`
leaves the null fields out), so user submissions, the paper's seed and the audit log are kept as
they are. The committed sweeps (source "rrdemo", `leaderboard/project_runs/*/submission.json`)
now carry both settings, so their content hash changes: they are removed here, and the next
`leaderboard.service.seed_board` stores them once with the new columns instead of beside the old
copies (the downgrade does the same for the older code).

Revision ID: 0005_result_prompt_style_eos
Revises: 0004_result_n_honest
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_result_prompt_style_eos"
down_revision = "0004_result_n_honest"
branch_labels = None
depends_on = None

COLUMNS = ("prompt_style", "eos_policy")
SEEDED = "(SELECT id FROM submissions WHERE source = 'rrdemo')"


def _drop_seeded() -> None:
    op.execute(f"DELETE FROM results WHERE submission_id IN {SEEDED}")
    op.execute(f"DELETE FROM submissions WHERE id IN {SEEDED}")


def upgrade() -> None:
    # batch mode, as in 0002: SQLite adds a nullable column in place; other databases may copy.
    with op.batch_alter_table("results") as batch:
        for name in COLUMNS:
            batch.add_column(sa.Column(name, sa.String(16), nullable=True))
    _drop_seeded()


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
    _drop_seeded()  # the older code seeds its own copies again
