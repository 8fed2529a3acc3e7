"""Leaderboard operations: open the board (seeding the paper's tables and our own sweeps), store a submission,
list rows, and admin moderation.

`open_leaderboard()` is what a front end calls once. Every other function takes an open
`session` inside the caller's transaction (one per user event, see
`leaderboard.db.run_transaction`), so a submission's rows are written all together or not at
all. Duplicate content (same hash) is idempotent: the existing submission is returned.
"""

from __future__ import annotations

import hmac
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, selectinload, sessionmaker

from leaderboard.columns import STORED_COLUMNS, BoardRow
from leaderboard.db import create_db_engine, make_sessionmaker, run_transaction, upgrade
from leaderboard.orm import ADMIN_ACTIONS, AuditRecord, ResultRecord, SubmissionRecord
from leaderboard.paper_seed import TABLES, paper_submission
from rrdemo.errors import RRError
from rrdemo.report.submission import (
    MAX_REASON,
    RESERVED_SOURCES,
    ResultRow,
    Submission,
    parse_submission,
)

PROJECT_RUNS_ENV = "LEADERBOARD_PROJECT_RUNS"  # folder whose */submission.json every board seeds
ADMIN_TOKEN_ENV = "LEADERBOARD_ADMIN_TOKEN"
ADMINS_ENV = "LEADERBOARD_ADMINS"  # comma-separated Hugging Face usernames


@dataclass(frozen=True)
class SubmitOutcome:
    """What happened to a submission: stored now (`created`) or already present."""

    submission_id: int
    status: str
    created: bool
    n_rows: int

    @property
    def message(self) -> str:
        """One line for the user."""
        if self.created:
            return (
                f"Accepted as submission #{self.submission_id} with {self.n_rows} result rows; "
                f"status: {self.status} (an admin approves new submissions before they are shown)."
            )
        return (
            f"Already present as submission #{self.submission_id} (same content); "
            f"status: {self.status}. Nothing was added."
        )


def _utc_naive(moment: datetime) -> datetime:
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def result_record(row: ResultRow) -> ResultRecord:
    """The ORM row for one validated result row (its intervals split into lo / hi columns)."""
    maj_lo, maj_hi = row.maj_ci or (None, None)
    rrmaj_lo, rrmaj_hi = row.rrmaj_ci or (None, None)
    return ResultRecord(
        **row.model_dump(exclude={"maj_ci", "rrmaj_ci"}),
        maj_ci_lo=maj_lo,
        maj_ci_hi=maj_hi,
        rrmaj_ci_lo=rrmaj_lo,
        rrmaj_ci_hi=rrmaj_hi,
    )


def store_submission(
    session: Session, submission: Submission, *, status: str = "pending"
) -> SubmitOutcome:
    """Write a validated submission and its rows (or find it by content hash) in `session`."""
    digest = submission.content_hash()
    existing = session.scalar(
        select(SubmissionRecord).where(SubmissionRecord.content_hash == digest)
    )
    if existing is not None:
        n_rows = session.scalar(
            select(func.count(ResultRecord.id)).where(ResultRecord.submission_id == existing.id)
        )
        return SubmitOutcome(existing.id, existing.status, False, int(n_rows or 0))
    record = SubmissionRecord(
        content_hash=digest,
        schema_version=submission.schema_version,
        submitter=submission.submitter,
        notes=submission.notes,
        source=submission.source,
        provenance=submission.provenance,
        status=status,
        rrdemo_version=submission.rrdemo_version,
        created=_utc_naive(submission.created),
        submitted_at=_now(),
    )
    session.add(record)
    session.flush()
    for row in submission.results:
        # Flushed one by one: a failure part-way is still undone by the caller's transaction.
        record.rows.append(result_record(row))
        session.flush()
    return SubmitOutcome(record.id, status, True, len(submission.results))


def submit(session: Session, submission: Submission | bytes) -> SubmitOutcome:
    """Validate (when given file bytes) and store a user submission as pending.

    Raises `rrdemo.report.submission.SubmissionRejected` (one reason per problem) on bad input;
    nothing is written then. This is also the one-click path after an in-app experiment.
    """
    if isinstance(submission, bytes):
        submission = parse_submission(submission)
    if submission.source in RESERVED_SOURCES:
        raise RRError(
            f"source {submission.source!r} is reserved for {RESERVED_SOURCES[submission.source]}"
        )
    earlier = resubmitted(session, submission)
    if earlier is not None:  # someone's file posted again under another name
        return SubmitOutcome(earlier.id, earlier.status, False, len(earlier.rows))
    return store_submission(session, submission, status="pending")


def _row_values(record: ResultRecord) -> str:
    """A result row's stored values (not its ids), as one comparable text."""
    skip = ("id", "submission_id")
    return repr(
        [getattr(record, c.key) for c in ResultRecord.__table__.columns if c.key not in skip]
    )


def resubmitted(session: Session, submission: Submission) -> SubmissionRecord | None:
    """An earlier submission of the same file up to who submitted it: the same export time,
    source, version, notes and result rows. A signed-in user's submission is credited to them, which changes its
    content hash, so the hash alone would take another user's file as new."""
    candidates = session.scalars(
        select(SubmissionRecord)
        .options(selectinload(SubmissionRecord.rows))
        .where(
            SubmissionRecord.created == _utc_naive(submission.created),
            SubmissionRecord.source == submission.source,
            SubmissionRecord.rrdemo_version == submission.rrdemo_version,
            SubmissionRecord.notes == submission.notes,
            SubmissionRecord.provenance == submission.provenance,
        )
    )
    mine = sorted(_row_values(result_record(row)) for row in submission.results)
    for candidate in candidates:
        if sorted(_row_values(row) for row in candidate.rows) == mine:
            return candidate
    return None


_TABLES = {"results": ResultRecord, "submissions": SubmissionRecord}


def _stored(column: str | None) -> object:
    """The ORM attribute a stored column names ("results.model" -> ResultRecord.model)."""
    table, attribute = str(column).split(".")
    return getattr(_TABLES[table], attribute)


def board_rows(session: Session, *, include_all: bool = False) -> list[BoardRow]:
    """Result rows joined with their submission; approved only unless `include_all`."""
    query = (
        select(*(_stored(c.stored) for c in STORED_COLUMNS))
        .join(SubmissionRecord, ResultRecord.submission_id == SubmissionRecord.id)
        .order_by(SubmissionRecord.id, ResultRecord.id)
    )
    if not include_all:
        query = query.where(SubmissionRecord.status == "approved")
    names = [c.name for c in STORED_COLUMNS]
    return [BoardRow(**dict(zip(names, values, strict=True))) for values in session.execute(query)]


def list_submissions(session: Session, *, status: str | None = None) -> list[SubmissionRecord]:
    """Submissions (newest first), optionally only those with `status`, rows loaded."""
    query = (
        select(SubmissionRecord)
        .options(selectinload(SubmissionRecord.rows))
        .order_by(SubmissionRecord.id.desc())
    )
    if status is not None:
        query = query.where(SubmissionRecord.status == status)
    return list(session.scalars(query).all())


def admins() -> frozenset[str]:
    """The Hugging Face usernames allowed to moderate (`LEADERBOARD_ADMINS`, comma-separated, an
    optional leading @), each exactly as listed."""
    names = os.environ.get(ADMINS_ENV, "").replace(";", ",").split(",")
    return frozenset(name.strip().removeprefix("@") for name in names if name.strip())


def is_admin_user(username: str | None) -> bool:
    """True when `username` (a signed-in Hugging Face user) is listed in `LEADERBOARD_ADMINS`,
    character for character: "AdminUser" and "adminuser " are other names than "adminuser"."""
    return isinstance(username, str) and username in admins()


def with_submitter(submission: Submission, username: str) -> Submission:
    """The same submission credited to `username` (a signed-in Hugging Face user), re-validated."""
    data = json.loads(submission.canonical_json())
    data["submitter"] = username
    raw = json.dumps(data).encode("utf-8")
    return parse_submission(raw, max_bytes=len(raw) + 1)


def check_admin(token: str | None, username: str | None = None) -> None:
    """Allow a listed admin username (signed in) or the admin token; refuse anyone else."""
    if is_admin_user(username):
        return
    if not token and admins():
        who = f"@{username} is not a leaderboard admin" if username else "You are not signed in"
        raise RRError(
            f"{who}: sign in with a Hugging Face account listed in {ADMINS_ENV} or give the "
            "admin token; the action was refused."
        )
    check_admin_token(token)


class WrongToken(RRError):
    """A wrong admin token: counted by `leaderboard.guards.TokenGuard` to slow guessing."""


MAX_SUBMISSION_ID = 2**62  # SQLite integers are 64-bit; larger numbers cannot name a row


def check_submission_id(submission_id: int) -> None:
    """Refuse a submission number no row can have (SQLite integers are 64-bit)."""
    if not 1 <= submission_id <= MAX_SUBMISSION_ID:
        raise RRError(f"A submission number is a whole number from 1 to {MAX_SUBMISSION_ID}.")


def check_admin_token(token: str | None) -> None:
    """Refuse unless `token` equals `LEADERBOARD_ADMIN_TOKEN` (constant-time comparison)."""
    expected = os.environ.get(ADMIN_TOKEN_ENV, "")
    if not expected:
        raise RRError(
            f"Admin actions are disabled: the server has no {ADMIN_TOKEN_ENV} set "
            "(set it as a Space secret to enable approve / reject / delete)."
        )
    if not token:
        raise RRError("Give the admin token (or sign in as a listed admin); nothing was done.")
    given = token.encode("utf-8", "surrogatepass")  # any text compares, none crashes
    if not hmac.compare_digest(given, expected.encode("utf-8")):
        raise WrongToken("The admin token is wrong; the action was refused.")


def moderate(
    session: Session,
    submission_id: int,
    action: str,
    token: str | None,
    reason: str = "",
    *,
    username: str | None = None,
    at: datetime | None = None,
) -> str:
    """Approve, reject, delete or supersede a submission as an admin; the action goes to the
    audit log. Supersede marks every row of the submission superseded with `reason` (required):
    the board shows them labelled and never ranks them.

    An admin is a signed-in `username` listed in `LEADERBOARD_ADMINS`, or whoever gives the
    `LEADERBOARD_ADMIN_TOKEN`. `at` (default now) is the audit time, so a caller can journal it.
    """
    check_admin(token, username)
    if action not in ADMIN_ACTIONS:
        raise RRError(f"Unknown admin action {action!r}; allowed: {', '.join(ADMIN_ACTIONS)}")
    if len(reason) > 2000:
        raise RRError("The reason is longer than 2000 characters.")
    check_submission_id(submission_id)
    if action == "supersede" and not reason.strip():
        raise RRError("Give the reason the rows are superseded (it is shown beside them).")
    record = session.get(SubmissionRecord, submission_id)
    if record is None:
        raise RRError(f"There is no submission #{submission_id}.")
    if action == "supersede":
        supersede(record, reason.strip())
    if is_admin_user(username):
        reason = f"[@{username}] {reason}".rstrip()
    session.add(
        AuditRecord(
            at=_utc_naive(at) if at else _now(),
            action=action,
            submission_id=record.id,
            content_hash=record.content_hash,
            detail=reason,
        )
    )
    if action == "delete":
        session.delete(record)
        return f"Deleted submission #{submission_id} and its rows."
    if action == "supersede":
        return f"The rows of submission #{submission_id} are superseded; they are no longer ranked."
    record.status = "approved" if action == "approve" else "rejected"
    return f"Submission #{submission_id} is now {record.status}."


def supersede(record: SubmissionRecord, reason: str) -> None:
    """Mark every row of a submission superseded with `reason` (an admin's action, replayed from
    the journal the same way: its audit detail's "[@admin] " prefix is not part of the reason)."""
    reason = re.sub(r"^\[@[^\]]*\] ", "", reason)[:MAX_REASON]
    for row in record.rows:
        row.superseded = reason


def audit_log(session: Session) -> list[AuditRecord]:
    """Every recorded admin action, oldest first."""
    return list(session.scalars(select(AuditRecord).order_by(AuditRecord.id)).all())


def project_runs() -> Path:
    """Where this project's committed sweeps are: `LEADERBOARD_PROJECT_RUNS`, else the folder
    shipped inside this package (`leaderboard/project_runs`), so an installed board has them too."""
    configured = os.environ.get(PROJECT_RUNS_ENV)
    return Path(configured) if configured else Path(__file__).with_name("project_runs")


def seeded_submissions() -> list[Submission]:
    """What every board starts with: the paper's tables, then this project's committed sweeps
    (`project_runs()/*/submission.json`, source "rrdemo"), each validated like any submission."""
    found = [paper_submission(strength) for strength in TABLES]
    for path in sorted(project_runs().glob("*/submission.json")):
        submission = parse_submission(path.read_bytes(), allow_reserved=True)
        if submission.source != "rrdemo":
            raise RRError(f"{path}: a committed sweep's submission must have source 'rrdemo'")
        found.append(submission)
    return found


def seed_board(session: Session) -> int:
    """Insert the seeded submissions as approved unless present or deleted by an admin, and drop
    the earlier versions of the seeded ones.

    Idempotent (found by content hash); returns how many submissions were added. The sources
    "paper" and "rrdemo" are reserved for the seed (`seeded_submissions`), so a stored one that
    the seed no longer holds is an earlier version (a sweep published again, re-extracted or
    rerun, a column added): it is removed with its rows, so a board never lists a table twice and
    no migration is needed when a committed sweep changes.
    """
    seeded = seeded_submissions()
    current = [s.content_hash() for s in seeded]
    for record in session.scalars(
        select(SubmissionRecord).where(
            SubmissionRecord.source.in_(RESERVED_SOURCES),
            SubmissionRecord.content_hash.not_in(current),
        )
    ):
        session.delete(record)
    added = 0
    for submission in seeded:
        digest = submission.content_hash()
        present = session.scalar(
            select(SubmissionRecord.id).where(SubmissionRecord.content_hash == digest)
        )
        deleted = session.scalar(
            select(AuditRecord.id).where(
                AuditRecord.content_hash == digest, AuditRecord.action == "delete"
            )
        )
        if present is None and deleted is None:
            store_submission(session, submission, status="approved")
            added += 1
    return added


def open_leaderboard(url: str | None = None, *, seed: bool = True) -> sessionmaker[Session]:
    """Engine + schema at head + (by default) the paper's tables seeded; returns the factory.

    The database is `url`, else `LEADERBOARD_DB_URL` (see `leaderboard.db.database_url`).
    """
    engine = create_db_engine(url)
    try:
        upgrade(engine)
    except OperationalError as error:
        raise RRError(
            f"Cannot open the leaderboard database ({engine.url!r}): {error.orig}"
        ) from None
    factory = make_sessionmaker(engine)
    if seed:
        run_transaction(factory, seed_board)
    return factory
