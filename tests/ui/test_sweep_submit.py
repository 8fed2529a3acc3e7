"""Submitting a finished sweep from the Experiments tab: the log becomes a pending leaderboard
submission, once, under the leaderboard's rule (a login on a Space)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.hub_sync import Store, open_store
from leaderboard.service import board_rows
from rrdemo.errors import RRError
from ui.sweep_submit import submit_sweep

LOG = Path(__file__).resolve().parents[2] / "assets" / "experiment_small.jsonl"  # a real sweep log


@pytest.fixture
def store() -> Iterator[Store]:
    """The leaderboard as app.py opens it, once (on the test's own database)."""
    opened = open_store()
    yield opened
    opened.factory.kw["bind"].dispose()


def test_a_sweep_log_is_submitted_once_and_waits_for_approval(store):
    first = submit_sweep(store, str(LOG), "tester")
    assert first.startswith("Accepted as submission #") and "pending" in first
    again = submit_sweep(store, str(LOG), "tester")
    assert again.startswith("Already present")
    with store.factory() as session:
        mine = [r for r in board_rows(session, include_all=True) if r.status == "pending"]
        public = board_rows(session)
    header = json.loads(LOG.read_text().splitlines()[0])  # one row per condition of the sweep
    assert len(mine) == len(header["conditions"]) > 0
    assert all(r.status == "approved" for r in public) and not any(
        r.status == "pending" for r in public
    )


@pytest.mark.parametrize(
    ("path", "name", "message"),
    [(None, "tester", "run a sweep first"), (str(LOG), "  ", "type your name")],
)
def test_submit_without_a_log_or_a_name_is_refused(store, path, name, message):
    with pytest.raises(RRError, match=message):
        submit_sweep(store, path, name)


def test_submit_without_a_leaderboard_is_refused():
    with pytest.raises(RRError, match="leaderboard is not available"):
        submit_sweep(None, str(LOG), "tester")


def test_every_click_uses_the_one_store_and_opens_no_engine(store, monkeypatch):
    import leaderboard.db

    def no_engine(*args, **kwargs):
        raise AssertionError("a click opened a new database engine")

    monkeypatch.setattr(leaderboard.db, "create_engine", no_engine)
    assert submit_sweep(store, str(LOG), "tester").startswith("Accepted")
    assert submit_sweep(store, str(LOG), "tester").startswith("Already present")


def test_on_a_space_a_sweep_needs_a_login_and_is_credited_to_it(store, tmp_path: Path):
    with pytest.raises(RRError, match="Sign in with Hugging Face"):
        submit_sweep(store, str(LOG), "typed name", None, space=True)
    assert submit_sweep(store, str(LOG), "typed name", "alice", space=True).startswith("Accepted")
    with store.factory() as session:
        assert {
            r.submitter for r in board_rows(session, include_all=True) if r.status == "pending"
        } == {"alice"}
    broken = tmp_path / "sweep.jsonl"
    broken.write_text("not a log\n")
    with pytest.raises(RRError) as refused:
        submit_sweep(store, str(broken), "tester")
    assert str(tmp_path) not in str(refused.value) and "sweep.jsonl" in str(refused.value)
