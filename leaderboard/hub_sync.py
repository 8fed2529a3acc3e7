"""Keeping the leaderboard across restarts, and its store: what the app and the CLI write through.

A `Store` is an open leaderboard: its session factory, its journal (`leaderboard.journal`,
append-only files beside the database), the guards on its doors (`leaderboard.guards`) and,
when configured, the scheduler that pushes the journal to a hub dataset. `open_store` rebuilds
the database from the journal (and from the hub's copy, downloaded first) before anything reads it.

Where it lives: on a Space with persistent storage the data dir is /data (see
`rrdemo.paths.data_dir`), so database and journal simply survive. Without it, set
`LEADERBOARD_HF_DATASET_REPO` (e.g. `you/rrdemo-leaderboard`, token from `HF_TOKEN`): the journal
is pushed there every `LEADERBOARD_HF_SYNC_MINUTES` (default 5) and restored at the next start.
Without the variable nothing touches the network; tests never set it.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from leaderboard import service
from leaderboard.db import run_transaction
from leaderboard.guards import SubmitRate, TokenGuard, check_admin
from leaderboard.journal import Journal, journal_dir, rebuild, utc_now
from leaderboard.orm import AuditRecord, SubmissionRecord
from rrdemo.errors import RRError
from rrdemo.paths import data_dir
from rrdemo.report.submission import Submission

log = logging.getLogger(__name__)

REPO_ENV = "LEADERBOARD_HF_DATASET_REPO"
EVERY_ENV = "LEADERBOARD_HF_SYNC_MINUTES"
RESTORED_DIR = "leaderboard-hub-restore"  # the hub's copy, downloaded at start
PATTERNS = ["submissions/*.json", "moderation/*.json"]


def _repo() -> str | None:
    return os.environ.get(REPO_ENV, "").strip() or None


def restore_from_hub(target: Path) -> Path | None:
    """Download the hub copy of the journal into `target` when configured (None otherwise)."""
    repo = _repo()
    if repo is None:
        return None
    from huggingface_hub import snapshot_download  # slow to import; only when configured
    from huggingface_hub.errors import RepositoryNotFoundError

    try:
        snapshot_download(
            repo,
            repo_type="dataset",
            allow_patterns=PATTERNS,
            local_dir=target,
            token=os.environ.get("HF_TOKEN"),
        )
    except RepositoryNotFoundError:
        return None  # first start: nothing pushed yet (the scheduler creates the repo)
    return target


def start_hub_sync(journal: Journal, hf_api: Any = None):
    """Push the journal folder to the dataset repo every few minutes when configured."""
    repo = _repo()
    if repo is None or journal.folder is None:
        return None
    from huggingface_hub import CommitScheduler  # slow to import; only when configured

    scheduler = CommitScheduler(
        repo_id=repo,
        repo_type="dataset",
        folder_path=journal.folder,
        every=float(os.environ.get(EVERY_ENV, "5")),
        private=True,
        token=os.environ.get("HF_TOKEN"),
        allow_patterns=PATTERNS,
        hf_api=hf_api,
    )
    journal.lock = scheduler.lock  # no file is written while the scheduler lists the folder
    return scheduler


@dataclass
class Store:
    """An open leaderboard: its session factory, its journal, the guard on admin tokens and
    (when configured) its hub scheduler."""

    factory: sessionmaker[Session]
    journal: Journal
    scheduler: Any = None
    guard: TokenGuard = field(default_factory=TokenGuard)
    rate: SubmitRate = field(default_factory=SubmitRate)


SIGN_IN = "Sign in with Hugging Face (the button in the Leaderboard tab) to submit: results carry your username."


def submit_recorded(store: Store, submission: Submission) -> service.SubmitOutcome:
    """Store a submission (pending) and, once committed, journal it; returns the outcome."""
    outcome = run_transaction(store.factory, lambda s: service.submit(s, submission))
    if outcome.created:
        store.journal.submitted(submission)
    return outcome


def submit_as(
    store: Store, submission: Submission, username: str | None, space: bool
) -> service.SubmitOutcome:
    """The one submission rule of the app (the Leaderboard tab's upload and the Experiments tab's
    one click): on a Space the submitter must be signed in and is credited as that login;
    elsewhere the file's own submitter field stands. On a Space each user sends at most
    `LEADERBOARD_SUBMISSIONS_PER_HOUR` new submissions an hour (`SubmitRate`)."""
    if space:
        if not username:
            raise RRError(SIGN_IN)
        submission = service.with_submitter(submission, username)
        store.rate.check(username.lower())
    outcome = submit_recorded(store, submission)
    if space and outcome.created:
        store.rate.sent_one(username.lower())
    return outcome


def pending_for_admin(
    store: Store, token: str | None, username: str | None = None, client: str = ""
) -> list:
    """The submissions waiting for approval; admins only (their names and notes are not public)."""
    check_admin(store.guard, token, username, client)
    return run_transaction(store.factory, lambda s: service.list_submissions(s, status="pending"))


def moderate_recorded(
    store: Store,
    submission_id: int,
    action: str,
    token: str | None,
    reason: str = "",
    username: str | None = None,
    client: str = "",
) -> str:
    """An admin action, committed, then journalled with the same time as its audit record."""
    check_admin(store.guard, token, username, client)
    service.check_submission_id(submission_id)
    at = utc_now()

    def work(session: Session) -> tuple[str, str, str]:
        record = session.get(SubmissionRecord, submission_id)
        digest = record.content_hash if record is not None else ""
        message = service.moderate(
            session, submission_id, action, token, reason, username=username, at=at
        )
        detail = session.scalar(
            select(AuditRecord.detail).where(
                AuditRecord.at == at, AuditRecord.content_hash == digest
            )
        )
        return message, digest, detail or ""

    message, digest, detail = run_transaction(store.factory, work)
    store.journal.moderated(digest, action, detail, at)
    return message


def local_store(factory: sessionmaker[Session]) -> Store:
    """The leaderboard's database with its own journal (`journal_dir`; the CLI's: no hub
    download or sync), so a command's writes survive a rebuild like the app's."""
    journal = Journal(journal_dir(factory.kw["bind"].url))
    if journal.folder is not None:
        journal.folder.mkdir(parents=True, exist_ok=True)
    return Store(factory, journal)


def open_store(url: str | None = None) -> Store:
    """Open the database, rebuild it from the journal (and the hub copy), start the sync."""
    store = local_store(service.open_leaderboard(url))
    factory, journal = store.factory, store.journal
    try:
        restored = restore_from_hub(data_dir() / RESTORED_DIR)
    except Exception as error:  # the board still opens; the hub copy is merged next start
        log.warning("could not download the leaderboard journal from the hub: %s", error)
        restored = None
    done = rebuild(factory, *[f for f in (journal.folder, restored) if f is not None])
    log.info("leaderboard rebuilt from its journal: %s", done)
    try:
        scheduler = start_hub_sync(journal)
    except Exception as error:  # bad token, no network: the journal still grows locally
        log.error("leaderboard hub sync is off: %s", error)
        scheduler = None
    store.scheduler = scheduler
    return store
