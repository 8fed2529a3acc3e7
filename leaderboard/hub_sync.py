"""Optional: keep the leaderboard database in a Hugging Face dataset repo (off unless configured).

A Space without persistent storage loses its files on restart. When `LEADERBOARD_HF_DATASET_REPO`
is set (e.g. `org/rrdemo-leaderboard`, token from `HF_TOKEN`), `restore_from_hub()` fetches the
last backup before the database is opened, and `start_hub_sync()` starts a `CommitScheduler`
that pushes a consistent snapshot (SQLite online backup, safe under WAL) every few minutes.
Without the variable both functions do nothing and touch no network; tests never set it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from sqlalchemy.engine import make_url

from leaderboard.db import database_url
from rrdemo.paths import data_dir

REPO_ENV = "LEADERBOARD_HF_DATASET_REPO"
EVERY_ENV = "LEADERBOARD_HF_SYNC_MINUTES"  # default 10
BACKUP_NAME = "leaderboard.db"


def _repo() -> str | None:
    return os.environ.get(REPO_ENV, "").strip() or None


def _db_path() -> Path | None:
    url = make_url(database_url())
    if url.get_backend_name() != "sqlite" or not url.database or url.database == ":memory:":
        return None
    return Path(url.database)


def snapshot(source: Path, target: Path) -> Path:
    """Copy the SQLite database at `source` to `target` consistently (online backup API)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target


def restore_from_hub() -> bool:
    """Download the backup into place when configured and no local database exists yet."""
    repo, path = _repo(), _db_path()
    if repo is None or path is None or path.exists():
        return False
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, RepositoryNotFoundError

    try:
        downloaded = hf_hub_download(
            repo, BACKUP_NAME, repo_type="dataset", token=os.environ.get("HF_TOKEN")
        )
    except (EntryNotFoundError, RepositoryNotFoundError):
        return False  # first start: nothing backed up yet
    snapshot(Path(downloaded), path)
    return True


def start_hub_sync():  # type: ignore[no-untyped-def]
    """Start pushing snapshots to the dataset repo when configured; returns the scheduler."""
    repo, path = _repo(), _db_path()
    if repo is None or path is None:
        return None
    from huggingface_hub import CommitScheduler

    folder = data_dir() / "leaderboard-hub-sync"
    folder.mkdir(parents=True, exist_ok=True)

    class SnapshotScheduler(CommitScheduler):
        """Takes a fresh snapshot right before each scheduled push."""

        def push_to_hub(self):  # type: ignore[no-untyped-def]
            if path.exists():
                with self.lock:
                    snapshot(path, folder / BACKUP_NAME)
            return super().push_to_hub()

    return SnapshotScheduler(
        repo_id=repo,
        repo_type="dataset",
        folder_path=folder,
        every=float(os.environ.get(EVERY_ENV, "10")),
        private=True,
        token=os.environ.get("HF_TOKEN"),
        allow_patterns=[BACKUP_NAME],
    )
