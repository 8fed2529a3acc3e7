"""The leaderboard's append-only journal, and the rebuild of its database from it.

Every accepted submission and every admin action is written once, as its own JSON file, in the
journal folder of its database (`journal_dir`: beside a SQLite file, so the default
`<data dir>/leaderboard.db` journals into `<data dir>/leaderboard-journal/{submissions,moderation}/`,
or `LEADERBOARD_JOURNAL_DIR`); a rebuild reads only its own database's journal. Files are never
rewritten, which is what `huggingface_hub.CommitScheduler` needs to upload a folder safely
while it is written (`leaderboard.hub_sync`). A rebuild finds submissions by content hash and
admin actions by (time, action, hash), so it adds only what is missing and never doubles a row.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sqlalchemy import URL, make_url, select
from sqlalchemy.orm import Session, sessionmaker

from leaderboard import service
from leaderboard.db import run_transaction
from leaderboard.orm import ADMIN_ACTIONS, AuditRecord, SubmissionRecord
from rrdemo.paths import data_dir
from rrdemo.report.submission import Submission, SubmissionRejected, parse_submission

log = logging.getLogger(__name__)

JOURNAL_ENV = "LEADERBOARD_JOURNAL_DIR"  # an explicit journal folder (default: beside the database)


def utc_now() -> datetime:
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
        at = at or utc_now()
        payload = {"at": at.isoformat(), "submission": json.loads(submission.canonical_json())}
        return self._write_once(f"submissions/{submission.content_hash()}.json", payload)

    def moderated(
        self, content_hash: str, action: str, detail: str = "", at: datetime | None = None
    ) -> Path | None:
        """Record an admin action as moderation/<time>-<hash>-<action>.json."""
        at = at or utc_now()
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
