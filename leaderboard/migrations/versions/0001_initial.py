"""Initial leaderboard schema: submissions, their result rows, and the admin audit log.

Revision ID: 0001_initial
Revises:
Create Date: 2025-01-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "submissions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("submitter", sa.String(100), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column(
            "source",
            sa.Enum(
                "paper",
                "local_run",
                "uploaded",
                native_enum=False,
                create_constraint=True,
                name="submission_source",
                length=16,
            ),
            nullable=False,
        ),
        sa.Column(
            "status",
            sa.Enum(
                "pending",
                "approved",
                "rejected",
                native_enum=False,
                create_constraint=True,
                name="submission_status",
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("rrdemo_version", sa.String(128), nullable=False),
        sa.Column("created", sa.DateTime(), nullable=False),
        sa.Column("submitted_at", sa.DateTime(), nullable=False),
        sa.UniqueConstraint("content_hash"),
    )
    op.create_index("ix_submissions_status", "submissions", ["status"])

    op.create_table(
        "results",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column(
            "submission_id",
            sa.Integer(),
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("model_revision", sa.String(128), nullable=True),
        sa.Column("agent_models", sa.JSON(), nullable=False),
        sa.Column("corrupted_agents", sa.JSON(), nullable=False),
        sa.Column("dataset", sa.String(16), nullable=False),
        sa.Column("strength", sa.String(16), nullable=False),
        sa.Column("n_agents", sa.Integer(), nullable=False),
        sa.Column("n_corrupted", sa.Integer(), nullable=False),
        sa.Column("n_truthful", sa.Integer(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("m", sa.Integer(), nullable=False),
        sa.Column("max_tokens", sa.Integer(), nullable=True),
        sa.Column("n_questions", sa.Integer(), nullable=False),
        sa.Column("maj_accuracy", sa.Float(), nullable=True),
        sa.Column("rrmaj_accuracy", sa.Float(), nullable=True),
        sa.Column("maj_ci_lo", sa.Float(), nullable=True),
        sa.Column("maj_ci_hi", sa.Float(), nullable=True),
        sa.Column("rrmaj_ci_lo", sa.Float(), nullable=True),
        sa.Column("rrmaj_ci_hi", sa.Float(), nullable=True),
        sa.Column("config_hash", sa.String(128), nullable=False),
        sa.CheckConstraint("n_corrupted + n_truthful = n_agents", name="ck_results_c_plus_t"),
        sa.CheckConstraint(
            "maj_accuracy IS NULL OR (maj_accuracy >= 0 AND maj_accuracy <= 1)",
            name="ck_results_maj_range",
        ),
        sa.CheckConstraint(
            "rrmaj_accuracy IS NULL OR (rrmaj_accuracy >= 0 AND rrmaj_accuracy <= 1)",
            name="ck_results_rrmaj_range",
        ),
        sa.CheckConstraint("n_questions >= 1", name="ck_results_questions"),
    )
    op.create_index("ix_results_submission_id", "results", ["submission_id"])
    op.create_index("ix_results_model", "results", ["model"])

    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column(
            "action",
            sa.Enum(
                "approve",
                "reject",
                "delete",
                native_enum=False,
                create_constraint=True,
                name="audit_action",
                length=16,
            ),
            nullable=False,
        ),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
    )
    op.create_index("ix_audit_log_submission_id", "audit_log", ["submission_id"])


def downgrade() -> None:
    op.drop_index("ix_audit_log_submission_id", table_name="audit_log")
    op.drop_table("audit_log")
    op.drop_index("ix_results_model", table_name="results")
    op.drop_index("ix_results_submission_id", table_name="results")
    op.drop_table("results")
    op.drop_index("ix_submissions_status", table_name="submissions")
    op.drop_table("submissions")
