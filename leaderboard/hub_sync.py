"""Keeping the leaderboard across restarts: an append-only journal, pushed to a hub dataset.

Every accepted submission and every admin action is written once, as its own JSON file, in the
journal folder of its database (`journal_dir`: beside a SQLite file, so the default
`<data dir>/leaderboard.db` journals into `<data dir>/leaderboard-journal/{submissions,moderation}/`,
or `LEADERBOARD_JOURNAL_DIR`); a rebuild reads only its own database's journal. Files are never
rewritten, which is what `huggingface_hub.CommitScheduler` needs to upload a folder safely
while it is written. At start the SQLite database is rebuilt from the journal (and from the
hub's copy, downloaded first): submissions are found by content hash and admin actions by
(time, action, hash), so a rebuild adds only what is missing and never doubles a row.

Where it lives: on a Space with persistent storage the data dir is /data (see
`rrdemo.paths.data_dir`), so database and journal simply survive. Without it, set
`LEADERBOARD_HF_DATASET_REPO` (e.g. `you/rrdemo-leaderboard`, token from `HF_TOKEN`): the journal
is pushed there every `LEADERBOARD_HF_SYNC_MINUTES` (default 5) and restored at the next start.
Without the variable nothing touches the network; tests never set it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import URL, make_url, select
from sqlalchemy.orm import Session, sessionmaker

from leaderboard import service
from leaderboard.db import run_transaction
from leaderboard.orm import ADMIN_ACTIONS, AuditRecord, SubmissionRecord
from rrdemo.errors import RRError
from rrdemo.paths import data_dir
from rrdemo.report.submission import Submission, SubmissionRejected, parse_submission

log = logging.getLogger(__name__)

REPO_ENV = "LEADERBOARD_HF_DATASET_REPO"
EVERY_ENV = "LEADERBOARD_HF_SYNC_MINUTES"
JOURNAL_ENV = "LEADERBOARD_JOURNAL_DIR"  # an explicit journal folder (default: beside the database)
RESTORED_DIR = "leaderboard-hub-restore"  # the hub's copy, downloaded at start
PATTERNS = ["submissions/*.json", "moderation/*.json"]


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%S%f")


def journal_dir(url: str | URL) -> Path | None:
    """The journal folder of the database at `url`: `LEADERBOARD_JOURNAL_DIR` when set; else
    beside a SQLite file, named after it (`data/leaderboard.db` -> `data/leaderboard-journal`);
    for a server database, a folder of the data dir named after its URL (password left out);
    None for an in-memory database, which outlives no process and keeps no journal."""
    configured = os.environ.get(JOURNAL_ENV, "").strip()
    if configured:
        return Path(configured)
    url = make_url(url)
    if url.get_backend_name() == "sqlite":
        database = url.database or ""
        if database in ("", ":memory:") or url.query.get("mode") == "memory":
            return None
        path = Path(database)
        return path.with_name(f"{path.stem}-journal")
    named = url.set(password=None).render_as_string(hide_password=False)
    return data_dir() / f"leaderboard-journal-{hashlib.sha256(named.encode()).hexdigest()[:16]}"


@dataclass
class Journal:
    """The append-only files of one leaderboard (`folder` None: none are kept); `lock` is the
    scheduler's while it uploads."""

    folder: Path | None
    lock: Any = field(default_factory=threading.Lock)

    def _write_once(self, relative: str, payload: dict[str, Any]) -> Path | None:
        if self.folder is None:
            return None
        path = self.folder / relative
        with self.lock:
            if path.exists():  # append-only: a file is written once and never changed
                return path
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
            tmp.write_text(json.dumps(payload, sort_keys=True, indent=1), encoding="utf-8")
            tmp.replace(path)  # readers (and the uploader) never see half a file
        return path

    def submitted(self, submission: Submission, at: datetime | None = None) -> Path | None:
        """Record an accepted submission (its canonical content) as submissions/<hash>.json."""
        at = at or _now()
        payload = {"at": at.isoformat(), "submission": json.loads(submission.canonical_json())}
        return self._write_once(f"submissions/{submission.content_hash()}.json", payload)

    def moderated(
        self, content_hash: str, action: str, detail: str = "", at: datetime | None = None
    ) -> Path | None:
        """Record an admin action as moderation/<time>-<hash>-<action>.json."""
        at = at or _now()
        payload = {
            "at": at.isoformat(),
            "action": action,
            "content_hash": content_hash,
            "detail": detail,
        }
        return self._write_once(
            f"moderation/{_stamp(at)}-{content_hash[:16]}-{action}.json", payload
        )


def _read_all(folders: list[Path], kind: str) -> list[dict[str, Any]]:
    """Every journal file of `kind` in `folders` (same file name: read once), oldest first."""
    seen: dict[str, dict[str, Any]] = {}
    for folder in folders:
        for path in sorted((folder / kind).glob("*.json")):
            if path.name not in seen:
                try:
                    seen[path.name] = json.loads(path.read_text(encoding="utf-8"))
                except (OSError, ValueError) as error:
                    log.warning("skipping unreadable journal file %s: %s", path, error)
    return sorted(seen.values(), key=lambda entry: entry["at"])


@dataclass(frozen=True)
class Rebuilt:
    """What a rebuild added (0 and 0 when the database already had everything)."""

    submissions: int
    actions: int


def _add_submission(session: Session, entry: dict[str, Any]) -> bool:
    raw = json.dumps(entry["submission"]).encode("utf-8")
    try:
        submission = parse_submission(raw, max_bytes=len(raw) + 1)
    except (
        SubmissionRejected
    ) as error:  # an older schema: its rows stay in a database that has them
        log.warning("journal entry not replayed (%s)", "; ".join(error.reasons)[:300])
        return False
    deleted = session.scalar(
        select(AuditRecord.id).where(
            AuditRecord.action == "delete", AuditRecord.content_hash == submission.content_hash()
        )
    )
    if deleted is not None:  # an admin deleted it: a rebuild must not bring it back
        return False
    return service.store_submission(session, submission, status="pending").created


def _add_action(session: Session, entry: dict[str, Any]) -> bool:
    at, action, digest = datetime.fromisoformat(entry["at"]), entry["action"], entry["content_hash"]
    if action not in ADMIN_ACTIONS:
        return False
    done = session.scalar(
        select(AuditRecord.id).where(
            AuditRecord.at == at, AuditRecord.action == action, AuditRecord.content_hash == digest
        )
    )
    if done is not None:
        return False
    record = session.scalar(select(SubmissionRecord).where(SubmissionRecord.content_hash == digest))
    session.add(
        AuditRecord(
            at=at,
            action=action,
            submission_id=record.id if record else 0,
            content_hash=digest,
            detail=entry.get("detail", ""),
        )
    )
    if record is not None:
        if action == "delete":
            session.delete(record)
        elif action == "supersede":
            service.supersede(record, entry.get("detail", ""))
        else:
            record.status = "approved" if action == "approve" else "rejected"
    return True


def rebuild(factory: sessionmaker[Session], *folders: Path) -> Rebuilt:
    """Bring the database up to the journal(s): missing submissions, then missing admin actions."""
    existing = [folder for folder in folders if folder is not None and folder.is_dir()]
    added = sum(
        run_transaction(factory, lambda s, e=entry: _add_submission(s, e))
        for entry in _read_all(existing, "submissions")
    )
    actions = sum(
        run_transaction(factory, lambda s, e=entry: _add_action(s, e))
        for entry in _read_all(existing, "moderation")
    )
    return Rebuilt(int(added), int(actions))


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
class TokenGuard:
    """Slows admin-token guessing, one client at a time: after `limit` wrong tokens from a client
    within `window` seconds, that client's tokens are refused for `pause` seconds; other clients
    (the admins among them) are not held up. Signed-in admins are never paused."""

    limit: int = 5
    window: float = 300.0
    pause: float = 60.0
    failures: dict[str, list[float]] = field(default_factory=dict)  # client -> times
    paused_until: dict[str, float] = field(default_factory=dict)  # client -> end of pause
    lock: Any = field(default_factory=threading.Lock)

    def check(self, client: str = "") -> None:
        """Refuse (RRError) while `client`'s tokens are paused."""
        left = self.paused_until.get(client, 0.0) - time.monotonic()
        if left > 0:
            raise RRError(
                f"Too many wrong admin tokens from you: your tokens are refused for "
                f"{math.ceil(left)} more seconds. Sign in as a listed admin, or try again then."
            )

    def failed(self, client: str = "") -> None:
        """Count one wrong token of `client`; the `limit`-th within `window` starts its pause."""
        now = time.monotonic()
        with self.lock:
            for key, times in list(self.failures.items()):  # forget old failures: bounded
                if not [t for t in times if now - t < self.window]:
                    del self.failures[key]
            for key, until in list(self.paused_until.items()):
                if until <= now:
                    del self.paused_until[key]
            times = [t for t in self.failures.get(client, []) if now - t < self.window] + [now]
            self.failures[client] = times
            if len(times) >= self.limit:
                self.paused_until[client] = now + self.pause
                del self.failures[client]


SUBMISSIONS_ENV = "LEADERBOARD_SUBMISSIONS_PER_HOUR"
DEFAULT_SUBMISSIONS = 10


def submissions_per_hour() -> int:
    """`LEADERBOARD_SUBMISSIONS_PER_HOUR` (default 10), read when called."""
    text = os.environ.get(SUBMISSIONS_ENV, "").strip()
    if not text:
        return DEFAULT_SUBMISSIONS
    if not text.isdigit() or int(text) < 1:
        raise RRError(f"{SUBMISSIONS_ENV} must be a whole number of at least 1, got {text!r}")
    return int(text)


@dataclass
class SubmitRate:
    """At most `per_hour()` new submissions per user (the signed-in login) in any hour."""

    per_hour: Callable[[], int] = submissions_per_hour
    clock: Callable[[], float] = time.monotonic
    sent: dict[str, list[float]] = field(default_factory=dict)  # user -> times
    lock: Any = field(default_factory=threading.Lock)

    def check(self, user: str) -> None:
        """Refuse (RRError) `user`'s next submission when their hour's are spent."""
        limit, now = self.per_hour(), self.clock()
        with self.lock:
            for key, times in list(self.sent.items()):  # forget the past hour: bounded
                self.sent[key] = [t for t in times if now - t < 3600]
                if not self.sent[key]:
                    del self.sent[key]
            times = self.sent.get(user, [])
        if len(times) >= limit:
            wait = math.ceil((3600 - (now - times[0])) / 60)
            raise RRError(
                f"You have sent {len(times)} submissions in the last hour, the most this "
                f"leaderboard takes from one user ({SUBMISSIONS_ENV}); try again in {wait} minutes."
            )

    def sent_one(self, user: str) -> None:
        with self.lock:
            self.sent.setdefault(user, []).append(self.clock())


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


def check_admin(store: Store, token: str | None, username: str | None, client: str = "") -> None:
    """Allow a signed-in listed admin or the admin token, counting the wrong tokens of `client`
    (who sent them: `TokenGuard`)."""
    if not service.is_admin_user(username):
        store.guard.check(client)
    try:
        service.check_admin(token, username)
    except service.WrongToken:
        store.guard.failed(client)
        raise


def pending_for_admin(
    store: Store, token: str | None, username: str | None = None, client: str = ""
) -> list:
    """The submissions waiting for approval; admins only (their names and notes are not public)."""
    check_admin(store, token, username, client)
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
    check_admin(store, token, username, client)
    service.check_submission_id(submission_id)
    at = _now()

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
