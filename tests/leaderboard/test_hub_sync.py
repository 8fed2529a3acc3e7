"""The leaderboard across restarts: same storage, ephemeral disk rebuilt from the journal, the
CommitScheduler push of the append-only files (a fake HfApi, no network), HF identities and
admin usernames."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from huggingface_hub import HfApi
from sqlalchemy import func, select

from leaderboard import hub_sync, service
from leaderboard.db import run_transaction
from leaderboard.journal import Rebuilt
from leaderboard.orm import AuditRecord, ResultRecord, SubmissionRecord
from rrdemo.errors import RRError
from rrdemo.report.submission import parse_submission
from tests.support.samples import db_checksum, encode, submission


def _user_rows(store: hub_sync.Store) -> tuple[int, int, list[str]]:
    """(submissions, result rows, statuses) of the non-paper content."""

    def count(session):
        subs = session.scalars(
            select(SubmissionRecord).where(SubmissionRecord.source != "paper")
        ).all()
        rows = session.scalar(
            select(func.count(ResultRecord.id))
            .join(SubmissionRecord)
            .where(SubmissionRecord.source != "paper")
        )
        return len(subs), int(rows or 0), sorted(s.status for s in subs)

    return run_transaction(store.factory, count)


def _close(store: hub_sync.Store) -> None:
    store.factory.kw["bind"].dispose()


def _lose_database(folder: Path) -> None:
    """A restart without the database file (and its WAL), the journal beside it kept."""
    for name in ("leaderboard.db", "leaderboard.db-wal", "leaderboard.db-shm"):
        (folder / name).unlink(missing_ok=True)


@pytest.fixture
def admin(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("LEADERBOARD_ADMINS", "carol, @dave")
    return "carol"


def test_restart_against_the_same_storage_keeps_everything_once(lb_env: str, admin: str) -> None:
    store = hub_sync.open_store()
    doc = parse_submission(encode(submission()))
    outcome = hub_sync.submit_recorded(store, doc)
    assert outcome.created
    message = hub_sync.moderate_recorded(store, outcome.submission_id, "approve", None, "ok", admin)
    assert "approved" in message
    before = run_transaction(store.factory, db_checksum)
    _close(store)

    store = hub_sync.open_store()  # restart: same database file, same journal
    assert _user_rows(store) == (1, 1, ["approved"])
    assert run_transaction(store.factory, db_checksum) == before  # nothing added, nothing doubled
    again = hub_sync.submit_recorded(store, doc)  # the same content again: found, not doubled
    assert not again.created and _user_rows(store) == (1, 1, ["approved"])
    _close(store)


def test_lost_database_is_rebuilt_from_the_journal(
    lb_env: str,
    admin: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = hub_sync.open_store()
    kept = hub_sync.submit_recorded(store, parse_submission(encode(submission())))
    eve = submission(submitter="eve", created="2025-06-02T12:00:00+00:00")  # another export
    gone = hub_sync.submit_recorded(store, parse_submission(encode(eve)))
    hub_sync.moderate_recorded(store, kept.submission_id, "reject", None, "typo", admin)
    hub_sync.moderate_recorded(store, kept.submission_id, "approve", None, "fixed", "dave")
    hub_sync.moderate_recorded(store, gone.submission_id, "delete", None, "spam", admin)
    assert _user_rows(store) == (1, 1, ["approved"])
    audit = run_transaction(store.factory, service.audit_log)
    _close(store)

    journal = store.journal.folder
    assert journal == tmp_path / "leaderboard-journal"  # beside its database, leaderboard.db
    files = sorted(p.relative_to(journal).as_posix() for p in journal.rglob("*.json"))
    assert len([f for f in files if f.startswith("submissions/")]) == 2
    assert len([f for f in files if f.startswith("moderation/")]) == 3

    # A restart that lost the database: a new empty one, the journal kept.
    _lose_database(tmp_path)
    store = hub_sync.open_store()
    assert _user_rows(store) == (1, 1, ["approved"])  # the deleted one stays deleted
    rebuilt = run_transaction(store.factory, service.audit_log)
    assert [(a.at, a.action, a.content_hash, a.detail) for a in rebuilt] == [
        (a.at, a.action, a.content_hash, a.detail) for a in audit
    ]
    assert rebuilt[1].detail == "[@dave] fixed"  # who did it, from the signed-in username
    assert hub_sync.rebuild(store.factory, journal) == Rebuilt(0, 0)  # idempotent
    _close(store)


class RecordingApi(HfApi):
    """HfApi with its two network calls replaced: what would be uploaded is recorded."""

    def __init__(self) -> None:
        super().__init__(token="hf_fake")
        self.commits: list[dict[str, bytes]] = []

    def create_repo(self, repo_id: str, **kwargs):
        from huggingface_hub.hf_api import RepoUrl  # the real return type

        return RepoUrl(f"https://huggingface.co/datasets/{repo_id}")

    def create_commit(self, repo_id: str, operations, **kwargs):
        files = {}
        for operation in operations:
            source = operation.path_or_fileobj
            files[operation.path_in_repo] = source.read() if hasattr(source, "read") else b""
        self.commits.append(files)
        return None


def test_commit_scheduler_pushes_only_new_append_only_files(
    lb_env: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LEADERBOARD_HF_DATASET_REPO", "someone/rrdemo-leaderboard")
    monkeypatch.setenv("LEADERBOARD_ADMIN_TOKEN", "sesame")
    store = hub_sync.open_store()  # offline: download and push fail, logged; the board opens
    assert store.scheduler is None
    api = RecordingApi()
    scheduler = hub_sync.start_hub_sync(store.journal, hf_api=api)
    store.journal.lock = scheduler.lock
    try:
        first = hub_sync.submit_recorded(store, parse_submission(encode(submission())))
        scheduler.trigger().result()
        scheduler.trigger().result()  # nothing new: no second commit
        hub_sync.moderate_recorded(store, first.submission_id, "approve", "sesame", "")
        scheduler.trigger().result()
    finally:
        scheduler.stop()
    assert [sorted(commit) for commit in api.commits] == [
        [f"submissions/{parse_submission(encode(submission())).content_hash()}.json"],
        [next(iter(api.commits[1]))],
    ]
    assert next(iter(api.commits[1])).startswith("moderation/")
    pushed = json.loads(next(iter(api.commits[0].values())))
    assert pushed["submission"]["submitter"] == "alice"
    _close(store)

    # The next start downloads what was pushed (here: written from the recorded commits) into
    # the restore folder; a fresh database is rebuilt from it alone.
    restored = tmp_path / "restored"
    for commit in api.commits:
        for name, data in commit.items():
            (restored / name).parent.mkdir(parents=True, exist_ok=True)
            (restored / name).write_bytes(data)
    shutil.rmtree(store.journal.folder)
    monkeypatch.delenv("LEADERBOARD_HF_DATASET_REPO")
    monkeypatch.setenv("LEADERBOARD_DB_URL", f"sqlite:///{tmp_path / 'fresh.db'}")
    store = hub_sync.open_store()
    assert _user_rows(store) == (0, 0, [])
    assert hub_sync.rebuild(store.factory, restored) == Rebuilt(1, 1)
    assert _user_rows(store) == (1, 1, ["approved"])
    assert hub_sync.rebuild(store.factory, restored) == Rebuilt(0, 0)
    _close(store)


def test_space_submissions_carry_the_signed_in_username(lb_env: str, tmp_path: Path) -> None:
    from leaderboard.hub_sync import SIGN_IN
    from ui.leaderboard_tab import submit_file

    store = hub_sync.open_store()
    path = tmp_path / "sub.json"
    path.write_bytes(encode(submission(submitter="whatever I type")))
    assert submit_file(store, str(path), None, space=True) == SIGN_IN  # signed out: refused
    assert _user_rows(store) == (0, 0, [])
    assert "Accepted" in submit_file(store, str(path), "alice-hf", space=True)
    assert not path.exists()  # read, then deleted: uploads are not kept
    path.write_bytes(encode(submission(submitter="whatever I type")))
    assert "Already present" in submit_file(store, str(path), "bob-hf", space=True)  # alice's
    other = submission(submitter="whatever I type", created="2025-06-02T12:00:00+00:00")
    path.write_bytes(encode(other))
    assert "Accepted" in submit_file(store, str(path), None, space=False)  # locally: free text
    names = run_transaction(
        store.factory,
        lambda s: sorted(
            s.scalars(
                select(SubmissionRecord.submitter).where(SubmissionRecord.source != "paper")
            ).all()
        ),
    )
    assert names == ["alice-hf", "whatever I type"]
    _close(store)


def test_admins_are_usernames_or_the_token(
    lb_env: str,
    admin: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = hub_sync.open_store()
    sub = hub_sync.submit_recorded(store, parse_submission(encode(submission())))
    with pytest.raises(RRError, match="@mallory is not a leaderboard admin"):
        hub_sync.moderate_recorded(store, sub.submission_id, "approve", None, "", "mallory")
    with pytest.raises(RRError, match="You are not signed in"):
        hub_sync.moderate_recorded(store, sub.submission_id, "approve", None, "")
    assert service.admins() == frozenset({"carol", "dave"})
    # names match character for character: no case folding, no stripping
    for near in ("Carol", "CAROL", "carol ", " carol", "Dave"):
        with pytest.raises(RRError, match="is not a leaderboard admin"):
            hub_sync.moderate_recorded(store, sub.submission_id, "approve", None, "", near)
    assert "approved" in hub_sync.moderate_recorded(
        store, sub.submission_id, "approve", None, "", "carol"
    )
    monkeypatch.setenv("LEADERBOARD_ADMIN_TOKEN", "sesame")
    assert "rejected" in hub_sync.moderate_recorded(store, sub.submission_id, "reject", "sesame")
    with pytest.raises(RRError, match="token is wrong"):
        hub_sync.moderate_recorded(store, sub.submission_id, "approve", "guess", "", "mallory")
    audit = run_transaction(store.factory, lambda s: s.scalar(select(func.count(AuditRecord.id))))
    assert audit == 2  # refused actions leave no trace
    journal = Path(store.journal.folder)
    assert len(list((journal / "moderation").glob("*.json"))) == 2
    _close(store)


def test_one_click_submissions_are_journalled_too(
    lb_env: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The Experiments tab's one-click path (`hub_sync.submit_recorded` on the app's one store)
    survives a lost database."""
    store = hub_sync.open_store()
    doc = parse_submission(encode(submission(submitter="sweeper")))
    outcome = hub_sync.submit_recorded(store, doc)
    assert outcome.created
    _close(store)
    _lose_database(tmp_path)
    store = hub_sync.open_store()
    assert _user_rows(store) == (1, 1, ["pending"])
    _close(store)


def test_a_superseded_submission_stays_superseded_after_a_rebuild(
    lb_env: str, admin: str, tmp_path: Path
) -> None:
    store = hub_sync.open_store()
    outcome = hub_sync.submit_recorded(store, parse_submission(encode(submission())))
    number = outcome.submission_id
    hub_sync.moderate_recorded(store, number, "approve", None, "ok", admin)
    refused = pytest.raises(RRError, match="Give the reason")
    with refused:
        hub_sync.moderate_recorded(store, number, "supersede", None, " ", admin)
    hub_sync.moderate_recorded(store, number, "supersede", None, "rerun on 80 questions", admin)

    def standings(session) -> set[str]:
        return {r.standing for r in service.board_rows(session) if r.submission_id == number}

    assert run_transaction(store.factory, standings) == {"superseded: rerun on 80 questions"}
    _close(store)
    # An older submission in the journal (schema 3: no estimator, no provenance) is skipped,
    # saying why, and the rebuild goes on.
    old = submission(schema_version=3, submitter="old", notes="o")
    old.pop("provenance")
    for row in old["results"]:
        row.pop("estimator")
    journal = store.journal.folder
    (journal / "submissions" / "old.json").write_text(
        json.dumps({"at": "2025-01-01T00:00:00", "submission": old}), encoding="utf-8"
    )
    _lose_database(tmp_path)
    store = hub_sync.open_store()  # rebuilt from the journal: approved, then superseded
    assert run_transaction(store.factory, standings) == {"superseded: rerun on 80 questions"}
    _close(store)
