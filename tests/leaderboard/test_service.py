"""The leaderboard service: the paper seeded once, submissions, idempotent duplicates, a crash
part-way through a submission, admin moderation, and our committed sweeps."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from leaderboard import service
from leaderboard.db import (
    run_transaction,
)
from leaderboard.orm import ResultRecord, SubmissionRecord
from leaderboard.paper_seed import paper_submission
from rrdemo.errors import RRError
from rrdemo.report.submission import parse_submission
from tests.support.samples import db_checksum, encode, result_row, submission


def test_open_seeds_the_paper_once(factory) -> None:
    first = run_transaction(factory, lambda s: db_checksum(s))
    assert run_transaction(factory, service.seed_board) == 0
    assert run_transaction(factory, lambda s: db_checksum(s)) == first
    subs = run_transaction(factory, service.list_submissions)
    assert {s.source for s in subs} == {"paper"} and {s.status for s in subs} == {"approved"}
    # one row per line of the paper's main tables and per ensemble, both strengths
    assert first[0]["results"] == sum(
        len(paper_submission(strength).results) for strength in ("moderate", "strong")
    )


def test_submit_stores_pending_rows_and_duplicates_are_idempotent(factory) -> None:
    rows = [result_row(), result_row(dataset="aqua", rrmaj_accuracy=0.75)]
    raw = encode(submission(rows))
    before = run_transaction(factory, lambda s: db_checksum(s))[0]

    outcome = run_transaction(factory, lambda s: service.submit(s, raw))
    assert outcome.created and outcome.status == "pending" and outcome.n_rows == 2
    again = run_transaction(factory, lambda s: service.submit(s, raw))
    assert not again.created and again.submission_id == outcome.submission_id
    # Same content with different whitespace and key order is the same submission.
    reordered = encode(dict(reversed(list(submission(rows).items()))))
    assert run_transaction(factory, lambda s: service.submit(s, reordered)).submission_id == (
        outcome.submission_id
    )

    after = run_transaction(factory, lambda s: db_checksum(s))[0]
    assert after["submissions"] == before["submissions"] + 1
    assert after["results"] == before["results"] + 2
    # Pending rows are not on the public board, but are listed with --all.
    public = run_transaction(factory, service.board_rows)
    everything = run_transaction(factory, lambda s: service.board_rows(s, include_all=True))
    assert all(r.submission_id != outcome.submission_id for r in public)
    mine = [r for r in everything if r.submission_id == outcome.submission_id]
    assert [(r.dataset, r.rrmaj_accuracy, r.status) for r in mine] == [
        ("gsm8k", 0.5, "pending"),
        ("aqua", 0.75, "pending"),
    ]
    stored = run_transaction(
        factory,
        lambda s: s.scalars(
            select(ResultRecord).where(ResultRecord.submission_id == outcome.submission_id)
        ).all(),
    )
    assert stored[0].maj_ci_lo == 0.125 and stored[0].maj_ci_hi == 0.40625
    assert stored[0].corrupted_agents == [0, 1, 2] and len(stored[0].agent_models) == 5


def test_a_crash_after_the_first_row_leaves_no_partial_submission(
    factory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = run_transaction(factory, lambda s: db_checksum(s))
    real = service.result_record
    calls: list[int] = []

    def crash_on_second_row(row):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("injected crash")
        return real(row)

    monkeypatch.setattr(service, "result_record", crash_on_second_row)
    rows = [result_row(), result_row(dataset="aqua"), result_row(dataset="math500")]
    with pytest.raises(RuntimeError, match="injected crash"):
        run_transaction(factory, lambda s: service.submit(s, encode(submission(rows))))
    assert len(calls) == 2  # the first row was written (flushed) before the crash
    assert run_transaction(factory, lambda s: db_checksum(s)) == before

    monkeypatch.setattr(service, "result_record", real)
    outcome = run_transaction(factory, lambda s: service.submit(s, encode(submission(rows))))
    assert outcome.created and outcome.n_rows == 3


def test_admin_actions_need_the_token_and_are_audited(
    factory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    raw = encode(submission())
    sub_id = run_transaction(factory, lambda s: service.submit(s, raw)).submission_id

    def act(action: str, token: str | None) -> str:
        return run_transaction(factory, lambda s: service.moderate(s, sub_id, action, token))

    with pytest.raises(RRError, match="no LEADERBOARD_ADMIN_TOKEN set"):
        act("approve", "anything")
    monkeypatch.setenv("LEADERBOARD_ADMIN_TOKEN", "correct horse")
    for missing in (None, ""):
        with pytest.raises(RRError, match="Give the admin token"):
            act("approve", missing)
    for wrong in ("correct", "correct horse ", "\ud800"):
        with pytest.raises(RRError, match="admin token is wrong"):
            act("approve", wrong)
    assert run_transaction(factory, service.audit_log) == []
    assert run_transaction(factory, lambda s: s.get(SubmissionRecord, sub_id).status) == "pending"

    assert "approved" in act("approve", "correct horse")
    assert any(r.submission_id == sub_id for r in run_transaction(factory, service.board_rows))
    assert "rejected" in act("reject", "correct horse")
    assert all(r.submission_id != sub_id for r in run_transaction(factory, service.board_rows))
    assert "Deleted" in act("delete", "correct horse")
    with pytest.raises(RRError, match=f"no submission #{sub_id}"):
        act("approve", "correct horse")

    log = run_transaction(factory, service.audit_log)
    assert [(a.action, a.submission_id) for a in log] == [
        ("approve", sub_id),
        ("reject", sub_id),
        ("delete", sub_id),
    ]
    # Deleting cascades to the rows (foreign keys are on).
    left = run_transaction(
        factory,
        lambda s: s.scalars(select(ResultRecord).where(ResultRecord.submission_id == sub_id)).all(),
    )
    assert left == []
    # The same file can be submitted again after a delete; it is pending again.
    again = run_transaction(factory, lambda s: service.submit(s, raw))
    assert again.created and again.status == "pending"


def test_deleted_paper_tables_are_not_seeded_again(
    factory,
    monkeypatch: pytest.MonkeyPatch,
    lb_env: str,
) -> None:
    monkeypatch.setenv("LEADERBOARD_ADMIN_TOKEN", "t")
    paper_ids = run_transaction(
        factory,
        lambda s: s.scalars(select(SubmissionRecord.id).order_by(SubmissionRecord.id)).all(),
    )
    run_transaction(factory, lambda s: service.moderate(s, paper_ids[0], "delete", "t"))
    reopened = service.open_leaderboard(lb_env)
    ids = run_transaction(reopened, lambda s: s.scalars(select(SubmissionRecord.id)).all())
    assert ids == paper_ids[1:]
    reopened.kw["bind"].dispose()


def test_hub_sync_is_off_unless_configured(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without LEADERBOARD_HF_DATASET_REPO nothing is downloaded or pushed (no network)."""
    from leaderboard import hub_sync

    monkeypatch.delenv("LEADERBOARD_HF_DATASET_REPO", raising=False)
    assert hub_sync.start_hub_sync(hub_sync.Journal(tmp_path / "journal")) is None
    assert hub_sync.restore_from_hub(tmp_path / "restore") is None
    assert not (tmp_path / "restore").exists()


def test_a_committed_sweep_published_again_replaces_its_earlier_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sweep re-extracted or rerun changes its content hash: the board lists the new version
    once, with its rows, and keeps every other submission (the paper's, a user's) as it was."""
    sweep = tmp_path / "runs" / "sweep"
    sweep.mkdir(parents=True)
    monkeypatch.setenv("LEADERBOARD_PROJECT_RUNS", str(tmp_path / "runs"))
    first = submission([result_row(config_hash="v1")], source="rrdemo")
    (sweep / "submission.json").write_bytes(encode(first))
    factory = service.open_leaderboard(f"sqlite:///{tmp_path / 'board.db'}")
    user = parse_submission(encode(submission([result_row(config_hash="user")])))
    run_transaction(factory, lambda s: service.submit(s, user))

    def ours(session):
        records = session.scalars(
            select(SubmissionRecord).where(SubmissionRecord.source == "rrdemo")
        ).all()
        return [(r.content_hash, sorted(row.config_hash for row in r.rows)) for r in records]

    def others(session):
        return db_checksum(session)[0]["results"] - sum(len(rows) for _, rows in ours(session))

    before = run_transaction(factory, others)
    rows = [result_row(config_hash="v2"), result_row(config_hash="v2b", n_corrupted=1, n_honest=4,
                                                      corrupted_agents=[0])]  # fmt: skip
    (sweep / "submission.json").write_bytes(encode(submission(rows, source="rrdemo")))
    new_hash = service.seeded_submissions()[-1].content_hash()
    assert run_transaction(factory, service.seed_board) == 1
    assert run_transaction(factory, ours) == [(new_hash, ["v2", "v2b"])]
    assert run_transaction(factory, others) == before  # the paper's rows and the user's kept
    orphans = run_transaction(
        factory,
        lambda s: s.scalars(select(ResultRecord).where(ResultRecord.config_hash.in_(["v1"]))).all(),
    )
    assert orphans == []  # the earlier version's rows went with it
    assert run_transaction(factory, service.seed_board) == 0  # and seeding again changes nothing
    assert run_transaction(factory, ours) == [(new_hash, ["v2", "v2b"])]


def test_our_committed_sweeps_are_seeded_approved_and_cannot_be_submitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rrdemo.report.submission import SubmissionRejected
    from rrdemo.report.submission_builder import build_submission

    log = Path(__file__).resolve().parents[2] / "assets" / "experiment_small.jsonl"
    made = build_submission(log, "rrdemo", "a committed sweep", source="rrdemo")
    folder = tmp_path / "runs" / "small"
    folder.mkdir(parents=True)
    (folder / "submission.json").write_text(made.model_dump_json())
    monkeypatch.setenv("LEADERBOARD_PROJECT_RUNS", str(tmp_path / "runs"))
    factory = service.open_leaderboard(f"sqlite:///{tmp_path / 'board.db'}")
    subs = run_transaction(factory, service.list_submissions)
    ours = [s for s in subs if s.source == "rrdemo"]
    assert len(ours) == 1 and ours[0].status == "approved"
    assert len(ours[0].rows) == len(made.results) > 0
    assert run_transaction(factory, service.seed_board) == 0  # idempotent
    with pytest.raises(SubmissionRejected, match="reserved for the sweeps this project commits"):
        parse_submission((folder / "submission.json").read_bytes())
    with pytest.raises(RRError, match="reserved"):
        run_transaction(factory, lambda s: service.submit(s, made))
    (folder / "submission.json").write_text(
        build_submission(log, "someone", source="local_run").model_dump_json()
    )
    with pytest.raises(RRError, match="must have source 'rrdemo'"):
        service.seeded_submissions()
