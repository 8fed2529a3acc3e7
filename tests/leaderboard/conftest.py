"""Fixtures of the leaderboard tests (found by pytest; builders are in `samples.py`).

Every test gets its own SQLite file under tmp_path through `LEADERBOARD_DB_URL`, its own data
dir, no admin token unless it sets one, and the hub offline.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.service import open_leaderboard
from tests.support.latex_tables import read_paper


@pytest.fixture
def lb_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Point the leaderboard at a fresh SQLite file; returns its URL."""
    monkeypatch.setenv("RRDEMO_DATA_DIR", str(tmp_path / "data"))
    url = f"sqlite:///{tmp_path / 'leaderboard.db'}"
    monkeypatch.setenv("LEADERBOARD_DB_URL", url)
    monkeypatch.delenv("LEADERBOARD_ADMIN_TOKEN", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return url


@pytest.fixture
def factory(lb_env: str) -> Iterator[sessionmaker[Session]]:
    """An opened leaderboard (schema at head, paper seeded) on the test's database."""
    made = open_leaderboard(lb_env)
    yield made
    made.kw["bind"].dispose()


@pytest.fixture(scope="session")
def paper_tex() -> str:
    """The paper's LaTeX source, shipped with the tests (tests/data/consensus_trap.tex)."""
    return read_paper()
