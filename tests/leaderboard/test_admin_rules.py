"""The leaderboard's rules for every path: one submission rule, journalled CLI writes, admin-only
pending entries, slowed token guessing and plain refusals for out-of-range input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leaderboard import cli, hub_sync, service
from leaderboard.db import run_transaction
from rrdemo.errors import RRError
from rrdemo.report.submission import parse_submission
from tests.support.samples import db_checksum, encode, result_row, submission


@pytest.fixture
def store(lb_env: str, monkeypatch: pytest.MonkeyPatch) -> hub_sync.Store:
    monkeypatch.setenv("LEADERBOARD_ADMIN_TOKEN", "sesame")
    return hub_sync.open_store()


def _doc(**overrides) -> bytes:
    return encode(submission([result_row()], **overrides))


def test_on_a_space_every_submission_needs_a_login_and_carries_it(store) -> None:
    sub = parse_submission(_doc(submitter="typed name"))
    with pytest.raises(RRError, match="Sign in with Hugging Face"):
        hub_sync.submit_as(store, sub, None, space=True)
    outcome = hub_sync.submit_as(store, sub, "alice", space=True)
    stored = run_transaction(store.factory, lambda s: service.list_submissions(s, status="pending"))
    assert outcome.created and [s.submitter for s in stored] == ["alice"]


def test_pending_entries_are_for_admins_only(store) -> None:
    hub_sync.submit_as(store, parse_submission(_doc(notes="private")), None, space=False)
    with pytest.raises(RRError, match="token is wrong"):
        hub_sync.pending_for_admin(store, "guess")
    assert [s.notes for s in hub_sync.pending_for_admin(store, "sesame")] == ["private"]


def test_repeated_wrong_tokens_pause_token_actions(store, monkeypatch) -> None:
    monkeypatch.setenv("LEADERBOARD_ADMINS", "root")
    store.guard = hub_sync.TokenGuard(limit=3, window=60, pause=30)
    outcome = hub_sync.submit_recorded(store, parse_submission(_doc()))
    for guess in ("a", "b", "\ud800"):  # a lone surrogate is just a wrong token
        with pytest.raises(RRError, match="token is wrong"):
            hub_sync.moderate_recorded(store, outcome.submission_id, "approve", guess)
    with pytest.raises(RRError, match="Too many wrong admin tokens"):
        hub_sync.moderate_recorded(store, outcome.submission_id, "approve", "sesame")
    # A signed-in listed admin is never paused.
    message = hub_sync.moderate_recorded(
        store, outcome.submission_id, "approve", None, username="root"
    )
    assert message.endswith("is now approved.")


@pytest.mark.parametrize("number", [0, -1, 2**63, 2**70])
def test_submission_numbers_out_of_range_get_a_message(store, number: int) -> None:
    before = run_transaction(store.factory, db_checksum)
    with pytest.raises(RRError, match="a whole number from 1 to"):
        hub_sync.moderate_recorded(store, number, "delete", "sesame")
    assert run_transaction(store.factory, db_checksum) == before


def test_cli_writes_are_journalled_like_the_apps(
    store, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "mine.json"
    path.write_bytes(_doc(notes="from the CLI"))
    assert cli.main(["submit", str(path)]) == 0
    number = int(capsys.readouterr().out.split("#")[1].split()[0])
    assert cli.main(["approve", str(number), "--token", "sesame"]) == 0
    journal = store.journal.folder
    entries = [json.loads(p.read_text()) for p in (journal / "submissions").glob("*.json")]
    assert [e["submission"]["notes"] for e in entries] == ["from the CLI"]
    actions = [json.loads(p.read_text()) for p in (journal / "moderation").glob("*.json")]
    assert [a["action"] for a in actions] == ["approve"]


def test_wrong_tokens_pause_only_the_client_that_sent_them(store) -> None:
    store.guard = hub_sync.TokenGuard(limit=3, window=60, pause=30)
    outcome = hub_sync.submit_recorded(store, parse_submission(_doc(notes="paused?")))
    for guess in ("a", "b", "c"):
        with pytest.raises(RRError, match="token is wrong"):
            hub_sync.pending_for_admin(store, guess, client="ip:6.6.6.6")
    with pytest.raises(RRError, match="Too many wrong admin tokens from you"):
        hub_sync.pending_for_admin(store, "sesame", client="ip:6.6.6.6")
    # The admin, from another address, is not held up by someone else's guesses.
    message = hub_sync.moderate_recorded(
        store, outcome.submission_id, "approve", "sesame", client="ip:1.2.3.4"
    )
    assert message.endswith("is now approved.")


def test_another_users_copy_of_a_file_is_a_duplicate_and_submissions_are_rate_limited(
    store, monkeypatch
) -> None:
    first = hub_sync.submit_as(store, parse_submission(_doc(notes="mine")), "alice", space=True)
    copy = hub_sync.submit_as(store, parse_submission(_doc(notes="mine")), "mallory", space=True)
    assert first.created and not copy.created and copy.submission_id == first.submission_id
    assert "Already present" in copy.message
    monkeypatch.setenv("LEADERBOARD_SUBMISSIONS_PER_HOUR", "2")
    hub_sync.submit_as(store, parse_submission(_doc(notes="second")), "alice", space=True)
    with pytest.raises(RRError, match="sent 2 submissions in the last hour.*try again in 60"):
        hub_sync.submit_as(store, parse_submission(_doc(notes="third")), "Alice", space=True)
    hub_sync.submit_as(store, parse_submission(_doc(notes="bob's")), "bob", space=True)
    monkeypatch.setenv("LEADERBOARD_SUBMISSIONS_PER_HOUR", "many")
    with pytest.raises(RRError, match="LEADERBOARD_SUBMISSIONS_PER_HOUR must be a whole number"):
        hub_sync.submit_as(store, parse_submission(_doc(notes="x")), "carol", space=True)
