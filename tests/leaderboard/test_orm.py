"""The leaderboard's tables: the constraints the database itself keeps, a submission owning its
rows, and an audit trail that outlives what it audits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from leaderboard import service
from leaderboard.db import make_sessionmaker, run_transaction
from leaderboard.orm import ADMIN_ACTIONS, STATUSES, AuditRecord, ResultRecord, SubmissionRecord
from rrdemo.report.submission import parse_submission
from tests.support.samples import encode, result_row, submission


def _submitted(factory, rows=None) -> int:
    raw = encode(submission(rows))
    return run_transaction(factory, lambda s: service.submit(s, raw)).submission_id


def _bad_row(factory, **changes) -> None:
    """Insert one result row of a stored submission with `changes` applied."""
    sub_id = _submitted(factory)

    def insert(session):
        record = service.result_record(parse_submission(encode(submission())).results[0])
        record.submission_id = sub_id
        for name, value in changes.items():
            setattr(record, name, value)
        session.add(record)
        session.flush()

    run_transaction(factory, insert)


def test_the_database_itself_refuses_inconsistent_rows(factory) -> None:
    with pytest.raises(IntegrityError, match="ck_results_c_plus_t"):
        _bad_row(factory, n_honest=9)  # c + t != N
    with pytest.raises(IntegrityError, match="ck_results_maj_range"):
        _bad_row(factory, maj_accuracy=1.5)
    with pytest.raises(IntegrityError, match="ck_results_questions"):
        _bad_row(factory, n_questions=0)
    with pytest.raises(IntegrityError, match="FOREIGN KEY"):
        _bad_row(factory, submission_id=10**9)
    engine = make_sessionmaker(factory.kw["bind"])
    with engine.begin() as session:
        assert session.scalar(select(AuditRecord).limit(1)) is None


def test_words_outside_their_choices_are_refused(factory) -> None:
    sub_id = _submitted(factory)

    def set_status(session):
        session.get(SubmissionRecord, sub_id).status = "hidden"
        session.flush()

    assert "hidden" not in STATUSES
    with pytest.raises(IntegrityError, match="submission_status"):
        run_transaction(factory, set_status)

    def audit(session):
        session.add(
            AuditRecord(
                at=datetime.now(UTC), action="promote", submission_id=sub_id, content_hash="x"
            )
        )
        session.flush()

    assert "promote" not in ADMIN_ACTIONS
    with pytest.raises(IntegrityError, match="audit_action"):
        run_transaction(factory, audit)


def test_a_submission_owns_its_rows_in_order_and_the_audit_outlives_it(factory) -> None:
    rows = [result_row(dataset=d) for d in ("gsm8k", "aqua", "logic3")]
    sub_id = _submitted(factory, rows)

    def read(session):
        record = session.get(SubmissionRecord, sub_id)
        return [r.dataset for r in record.rows], [r.id for r in record.rows]

    datasets, ids = run_transaction(factory, read)
    assert datasets == ["gsm8k", "aqua", "logic3"] and ids == sorted(ids)

    def delete(session):
        record = session.get(SubmissionRecord, sub_id)
        session.add(
            AuditRecord(
                at=datetime.now(UTC),
                action="delete",
                submission_id=sub_id,
                content_hash=record.content_hash,
            )
        )
        session.delete(record)

    run_transaction(factory, delete)
    left = run_transaction(
        factory,
        lambda s: s.scalars(select(ResultRecord).where(ResultRecord.submission_id == sub_id)).all(),
    )
    audit = run_transaction(factory, lambda s: s.scalars(select(AuditRecord)).all())
    assert left == [] and [(a.action, a.submission_id) for a in audit] == [("delete", sub_id)]
