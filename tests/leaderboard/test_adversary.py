"""Schema 2's optional `adversary`: old files still valid (same content hash), new files stored,
and migration 0002 adds the column to a database holding schema-1 rows (in memory)."""

from __future__ import annotations

from datetime import datetime

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard import service
from leaderboard.db import create_db_engine, current_revision, downgrade, upgrade
from leaderboard.orm import ResultRecord
from rrdemo.report.submission import SubmissionRejected, parse_submission
from tests.support.samples import encode, result_row, submission

# Content hashes of two schema-1 files, computed by the schema-1 code (before `adversary` existed).
V1_HASHES = {
    "one row": "d810535fd912c5fd5d0b499012d716ff7ad42e5a8da55a4d70f31bacc4d77f74",
    "two rows": "5d890f9d5b59a194b9014e96e5aaa8eafd2bbaefa8b141b15c335aa2c871255c",
}


def test_schema_1_files_validate_and_keep_their_content_hash():
    one = parse_submission(encode(submission()))
    two = parse_submission(encode(submission([result_row(), result_row(k=3, rrmaj_ci=[0.1, 0.2])])))
    assert one.results[0].adversary is None
    assert one.content_hash() == V1_HASHES["one row"]
    assert two.content_hash() == V1_HASHES["two rows"]


def test_schema_2_rows_name_their_strategy_and_strategies_are_different_configs():
    rows = [result_row(adversary="static"), result_row(adversary="contextual")]
    parsed = parse_submission(encode(submission(rows, schema_version=2)))
    assert [r.adversary for r in parsed.results] == ["static", "contextual"]
    same = [result_row(adversary="last-word"), result_row(adversary="last-word")]
    with pytest.raises(SubmissionRejected, match="results\\[1\\] repeats the configuration"):
        parse_submission(encode(submission(same, schema_version=2)))
    no_field = parse_submission(encode(submission(schema_version=2)))
    assert no_field.results[0].adversary is None


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            submission([result_row(adversary="contextual")]),
            "results[0].adversary needs schema_version 2",
        ),
        (
            submission([result_row(adversary="sneaky")], schema_version=2),
            "results[0].adversary: unknown adversary strategy; allowed: static, contextual, last-word",
        ),
    ],
)
def test_bad_adversary_fields_are_rejected_with_a_reason(doc, message):
    with pytest.raises(SubmissionRejected) as caught:
        parse_submission(encode(doc))
    assert any(message in reason for reason in caught.value.reasons), caught.value.reasons


def _schema_1_rows(engine: sa.Engine) -> None:
    """One submission with one result, written with the tables as migration 0001 made them."""
    meta = sa.MetaData()
    subs = sa.Table("submissions", meta, autoload_with=engine)
    results = sa.Table("results", meta, autoload_with=engine)
    row = result_row()
    with engine.begin() as connection:
        sub_id = connection.execute(
            sa.insert(subs).values(
                content_hash="x" * 64,
                schema_version=1,
                submitter="old",
                notes="",
                source="local_run",
                status="approved",
                rrdemo_version="0.1.0",
                created=datetime(2025, 1, 1),
                submitted_at=datetime(2025, 1, 1),
            )
        ).inserted_primary_key[0]
        connection.execute(
            sa.insert(results).values(
                submission_id=sub_id,
                **{k: v for k, v in row.items() if k not in ("maj_ci", "rrmaj_ci")},
            )
        )


def test_migration_0002_adds_the_column_keeps_old_rows_and_downgrades_cleanly():
    engine = create_db_engine("sqlite://")
    upgrade(engine, "0001_initial")
    _schema_1_rows(engine)
    upgrade(engine, "0002_result_adversary")
    assert current_revision(engine) == "0002_result_adversary"
    with Session(engine) as session, session.begin():
        old = session.scalars(sa.select(ResultRecord)).one()
        assert old.adversary is None and old.k == 100
        doc = submission([result_row(adversary="last-word", k=7)], schema_version=2)
        service.store_submission(session, parse_submission(encode(doc)))
    with Session(engine) as session:
        stored = session.scalars(sa.select(ResultRecord).where(ResultRecord.k == 7)).one()
        assert stored.adversary == "last-word"

    downgrade(engine, "0001_initial")
    columns = {c["name"] for c in sa.inspect(engine).get_columns("results")}
    assert "adversary" not in columns and "config_hash" in columns
    meta = sa.MetaData()
    results = sa.Table("results", meta, autoload_with=engine)
    with engine.connect() as connection:
        assert connection.scalar(sa.select(sa.func.count()).select_from(results)) == 2
    # The table was rebuilt without the column; its CHECK constraints still hold.
    bad = {k: v for k, v in result_row(n_truthful=9).items() if k not in ("maj_ci", "rrmaj_ci")}
    with pytest.raises(IntegrityError), engine.begin() as connection:
        connection.execute(sa.insert(results).values(submission_id=1, **bad))
    engine.dispose()
