"""Shared fixtures: every test gets its own data dir and database; real models load once per session."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(autouse=True)
def _isolated_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("RRDEMO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LEADERBOARD_DB_URL", f"sqlite:///{tmp_path / 'leaderboard.db'}")
    # the board seeds the paper's tables only; tests of our committed sweeps point this elsewhere
    monkeypatch.setenv("LEADERBOARD_PROJECT_RUNS", str(tmp_path / "no-project-runs"))


@pytest.fixture(scope="session")
def real_pool():
    """The offline models, loaded once for the whole session (converted copies come from .cache/)."""
    from rrdemo.backends.pool import ModelPool

    return ModelPool()
