"""The leaderboard's tables as SQLAlchemy 2.x ORM classes (typed `Mapped[...]` columns).

A `SubmissionRecord` is one accepted file (who, when, where from, moderation status, content
hash); its `ResultRecord` rows are the ensemble configurations with their MAJ / RRMaj accuracies.
`AuditRecord` keeps every admin action (approve, reject, delete, supersede). The schema is created and changed only through the
recorded migrations in `leaderboard/migrations/` (a test checks they match these classes). The
board's columns (`leaderboard.columns`) name the attributes they are read from.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, CheckConstraint, Enum, Float, ForeignKey, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from rrdemo.report.submission import ALL_SOURCES

STATUSES = ("pending", "approved", "rejected")
ADMIN_ACTIONS = ("approve", "reject", "delete", "supersede")


def _choice(name: str, values: tuple[str, ...]) -> Enum:
    """A short string column limited to `values` by a CHECK constraint named `name`."""
    return Enum(*values, native_enum=False, create_constraint=True, name=name, length=16)


class Base(DeclarativeBase):
    """Declarative base holding the leaderboard metadata."""


class SubmissionRecord(Base):
    """One accepted submission file; `status` is moderated by an admin."""

    __tablename__ = "submissions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(64), unique=True)  # sha256 of the content
    schema_version: Mapped[int] = mapped_column(Integer)
    submitter: Mapped[str] = mapped_column(String(100))
    notes: Mapped[str] = mapped_column(Text, default="")
    source: Mapped[str] = mapped_column(_choice("submission_source", ALL_SOURCES))
    status: Mapped[str] = mapped_column(
        _choice("submission_status", STATUSES),
        index=True,
    )
    rrdemo_version: Mapped[str] = mapped_column(String(128))
    # the study file, log or table that made the rows; NULL for files of schema 3 and older
    provenance: Mapped[str | None] = mapped_column(String(300))
    created: Mapped[datetime]  # when the results were exported (UTC, from the file)
    submitted_at: Mapped[datetime]  # when the server accepted the file (UTC)

    rows: Mapped[list[ResultRecord]] = relationship(
        back_populates="submission",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="ResultRecord.id",
    )


class ResultRecord(Base):
    """One ensemble configuration of a submission with its accuracies (fractions)."""

    __tablename__ = "results"
    __table_args__ = (
        CheckConstraint("n_corrupted + n_honest = n_agents", name="ck_results_c_plus_t"),
        CheckConstraint(
            "maj_accuracy IS NULL OR (maj_accuracy >= 0 AND maj_accuracy <= 1)",
            name="ck_results_maj_range",
        ),
        CheckConstraint(
            "rrmaj_accuracy IS NULL OR (rrmaj_accuracy >= 0 AND rrmaj_accuracy <= 1)",
            name="ck_results_rrmaj_range",
        ),
        CheckConstraint("n_questions >= 1", name="ck_results_questions"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submission_id: Mapped[int] = mapped_column(
        ForeignKey("submissions.id", ondelete="CASCADE"), index=True
    )
    model: Mapped[str] = mapped_column(String(200), index=True)
    model_revision: Mapped[str | None] = mapped_column(String(128))
    agent_models: Mapped[list[str]] = mapped_column(JSON)
    corrupted_agents: Mapped[list[int]] = mapped_column(JSON)
    dataset: Mapped[str] = mapped_column(String(16))
    strength: Mapped[str] = mapped_column(String(16))
    n_agents: Mapped[int] = mapped_column(Integer)
    n_corrupted: Mapped[int] = mapped_column(Integer)
    n_honest: Mapped[int] = mapped_column(Integer)
    k: Mapped[int] = mapped_column(Integer)
    m: Mapped[int] = mapped_column(Integer)
    max_tokens: Mapped[int | None] = mapped_column(Integer)
    n_questions: Mapped[int] = mapped_column(Integer)
    maj_accuracy: Mapped[float | None] = mapped_column(Float)
    rrmaj_accuracy: Mapped[float | None] = mapped_column(Float)
    maj_ci_lo: Mapped[float | None] = mapped_column(Float)
    maj_ci_hi: Mapped[float | None] = mapped_column(Float)
    rrmaj_ci_lo: Mapped[float | None] = mapped_column(Float)
    rrmaj_ci_hi: Mapped[float | None] = mapped_column(Float)
    config_hash: Mapped[str] = mapped_column(String(128))
    # the corrupted agents' strategy; NULL when the file does not say
    adversary: Mapped[str | None] = mapped_column(String(16))
    # the run's prompt style and end-of-sequence policy; NULL when the file does not say
    prompt_style: Mapped[str | None] = mapped_column(String(16))
    eos_policy: Mapped[str | None] = mapped_column(String(16))
    # how the accuracies were computed (rrdemo.report.submission.ESTIMATORS); NULL: not stated
    estimator: Mapped[str | None] = mapped_column(String(16))
    # why the row is no longer current (its study's or an admin's word); NULL: current
    superseded: Mapped[str | None] = mapped_column(Text)
    # the run's decisions paired: questions only MAJ / only RRMaj got right; NULL: not known
    maj_only: Mapped[int | None] = mapped_column(Integer)
    rrmaj_only: Mapped[int | None] = mapped_column(Integer)

    submission: Mapped[SubmissionRecord] = relationship(back_populates="rows")


class AuditRecord(Base):
    """One admin action (approve / reject / delete / supersede); kept after the submission is
    deleted."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime]  # UTC
    action: Mapped[str] = mapped_column(_choice("audit_action", ADMIN_ACTIONS))
    submission_id: Mapped[int] = mapped_column(Integer, index=True)  # no FK: survives deletes
    content_hash: Mapped[str] = mapped_column(String(64))
    detail: Mapped[str] = mapped_column(Text, default="")  # the admin's reason, if any
