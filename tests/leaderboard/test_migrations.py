"""The leaderboard's recorded migrations on databases that hold rows: each upgrade keeps every
stored value, still checks what it checked, and downgrades cleanly. Old rows are written with
plain SQL into the tables as the older migration made them (the ORM describes only the head)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from leaderboard import service
from leaderboard.db import (
    create_db_engine,
    current_revision,
    downgrade,
    head_revision,
    make_sessionmaker,
    run_transaction,
    upgrade,
)
from leaderboard.paper_seed import TABLES, paper_submission
from rrdemo.report.submission import parse_submission
from tests.support.samples import encode, paper_row_count, result_row, submission


def _tables(engine: sa.Engine) -> tuple[sa.Table, sa.Table]:
    meta = sa.MetaData()
    return (
        sa.Table("submissions", meta, autoload_with=engine),
        sa.Table("results", meta, autoload_with=engine),
    )


def _old_row(row: dict[str, Any], columns: set[str]) -> dict[str, Any]:
    """A result row as the columns of an older `results` table hold it."""
    values = {k: v for k, v in row.items() if k not in ("maj_ci", "rrmaj_ci")}
    for name, (lo, hi) in (
        ("maj", row.get("maj_ci") or (None, None)),
        ("rrmaj", row.get("rrmaj_ci") or (None, None)),
    ):
        values[f"{name}_ci_lo"], values[f"{name}_ci_hi"] = lo, hi
    if "n_honest" not in columns:
        values["n_truthful"] = values.pop("n_honest")
    for name in (
        "adversary",
        "prompt_style",
        "eos_policy",
        "estimator",
        "superseded",
        "maj_only",
        "rrmaj_only",
    ):
        if name not in columns:
            values.pop(name, None)
    return values


def store_raw(
    engine: sa.Engine, doc: dict[str, Any], status: str = "approved", digest: str = ""
) -> int:
    """Write a submission document and its rows with plain SQL into the tables as they are
    (`digest`: its content hash; a hash of the document by default)."""
    subs, results = _tables(engine)
    columns = {c.name for c in results.columns}
    digest = digest or hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()
    stated = {"provenance": doc["provenance"]} if "provenance" in subs.columns else {}
    with engine.begin() as connection:
        sub_id = connection.execute(
            sa.insert(subs).values(
                **stated,
                content_hash=digest,
                schema_version=doc["schema_version"],
                submitter=doc["submitter"],
                notes=doc["notes"],
                source=doc["source"],
                status=status,
                rrdemo_version=doc["rrdemo_version"],
                created=datetime.fromisoformat(doc["created"]).replace(tzinfo=None),
                submitted_at=datetime(2026, 1, 1),
            )
        ).inserted_primary_key[0]
        for row in doc["results"]:
            connection.execute(
                sa.insert(results).values(submission_id=sub_id, **_old_row(row, columns))
            )
    return sub_id


def _results(engine: sa.Engine) -> list[dict[str, Any]]:
    _, results = _tables(engine)
    with engine.connect() as connection:
        rows = connection.execute(sa.select(results).order_by(results.c.id)).mappings().all()
    return [dict(row) for row in rows]


def _submissions(engine: sa.Engine) -> dict[int, dict[str, Any]]:
    subs, _ = _tables(engine)
    with engine.connect() as connection:
        return {row["id"]: dict(row) for row in connection.execute(sa.select(subs)).mappings()}


def _checksum(engine: sa.Engine) -> tuple[dict[str, int], str]:
    """Row counts per table and a sha256 over every row, read from the tables as they are."""
    meta = sa.MetaData()
    meta.reflect(engine)
    counts, digest = {}, hashlib.sha256()
    with engine.connect() as connection:
        for table in meta.sorted_tables:
            rows = connection.execute(sa.select(table).order_by(*table.primary_key.columns)).all()
            counts[table.name] = len(rows)
            digest.update(repr([tuple(row) for row in rows]).encode())
    return counts, digest.hexdigest()


def _paper_docs(schema_version: int) -> list[dict[str, Any]]:
    docs = []
    for strength in TABLES:
        doc = json.loads(paper_submission(strength).model_dump_json())
        docs.append({**doc, "schema_version": schema_version})
    return docs


def test_migration_0002_adds_the_adversary_column_and_keeps_old_rows() -> None:
    engine = create_db_engine("sqlite://")
    upgrade(engine, "0001_initial")
    store_raw(engine, submission(schema_version=1))
    upgrade(engine, "0002_result_adversary")
    assert current_revision(engine) == "0002_result_adversary"
    (old,) = _results(engine)
    assert old["adversary"] is None and old["k"] == 100
    store_raw(engine, submission([result_row(adversary="last-word", k=7)], schema_version=2))
    assert [r["adversary"] for r in _results(engine)] == [None, "last-word"]

    downgrade(engine, "0001_initial")
    columns = {c["name"] for c in sa.inspect(engine).get_columns("results")}
    assert "adversary" not in columns and "config_hash" in columns
    assert len(_results(engine)) == 2
    # The table was rebuilt without the column; its CHECK constraints still hold.
    _, results = _tables(engine)
    bad = _old_row(result_row(n_honest=9), columns)
    with pytest.raises(IntegrityError), engine.begin() as connection:
        connection.execute(sa.insert(results).values(submission_id=1, **bad))
    engine.dispose()


def test_migration_0003_admits_source_rrdemo_keeps_rows_and_still_checks_the_source() -> None:
    engine = create_db_engine("sqlite://")
    upgrade(engine, "0002_result_adversary")
    for doc in _paper_docs(schema_version=1):
        store_raw(engine, doc)
    before = _checksum(engine)
    upgrade(engine, "0003_source_rrdemo")
    assert current_revision(engine) == "0003_source_rrdemo"
    assert _checksum(engine)[0] == before[0]  # no row lost
    store_raw(engine, submission(source="rrdemo", schema_version=2))
    with engine.begin() as connection, pytest.raises(Exception, match="submission_source"):
        connection.execute(
            sa.text(
                "INSERT INTO submissions (content_hash, schema_version, submitter, notes, source,"
                " status, rrdemo_version, created, submitted_at) VALUES ('x', 2, 'a', '', 'junk',"
                " 'approved', '0', '2026-01-01', '2026-01-01')"
            )
        )
    downgrade(engine, "0002_result_adversary")
    assert _checksum(engine) == before


def test_migration_0004_renames_t_to_n_honest_keeps_user_rows_and_reseeds_once(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEADERBOARD_PROJECT_RUNS", str(tmp_path / "none"))  # the paper's seeds only
    engine = create_db_engine(f"sqlite:///{tmp_path / 'board.db'}")
    upgrade(engine, "0003_source_rrdemo")
    for doc in _paper_docs(schema_version=1):  # seeded by an older rrdemo
        store_raw(engine, doc)
    contextual = {
        "n_corrupted": 1,
        "n_honest": 4,
        "corrupted_agents": [0],
        "adversary": "contextual",
    }
    rows = [result_row(), result_row(dataset="logic3", rrmaj_ci=[0.25, 0.75], **contextual)]
    user = store_raw(engine, submission(rows, schema_version=2), status="pending")
    kept = [r for r in _results(engine) if r["submission_id"] == user]
    assert {r["n_truthful"] for r in kept} == {2, 4}
    submitted = _submissions(engine)[user]

    upgrade(engine, "0004_result_n_honest")
    assert current_revision(engine) == "0004_result_n_honest"
    after = _results(engine)
    assert after == [  # the user's rows, every value kept, t under its new name; seeds gone
        {("n_honest" if k == "n_truthful" else k): v for k, v in r.items()} for r in kept
    ]
    assert [(r["n_honest"], r["adversary"]) for r in after] == [(2, None), (4, "contextual")]
    assert _submissions(engine) == {user: submitted}
    upgrade(engine)  # the board seeds with today's code, at head
    factory = make_sessionmaker(engine)
    assert run_transaction(factory, service.seed_board) == len(TABLES)
    board = run_transaction(factory, lambda s: service.board_rows(s, include_all=True))
    assert len(board) == paper_row_count() + len(rows)  # the paper's tables once, not twice
    assert sorted(r.label for r in board if r.submission_id == user) == ["1c4t", "3c2t"]
    with Session(engine) as session, pytest.raises(IntegrityError), session.begin():  # c + t = N
        record = service.result_record(parse_submission(encode(submission())).results[0])
        record.submission_id, record.n_honest = user, 9
        session.add(record)
    assert _checksum(engine)[0]["results"] == len(board)

    downgrade(engine, "0003_source_rrdemo")
    assert _results(engine) == kept
    engine.dispose()


def test_migration_0005_adds_prompt_style_and_eos_policy_and_reseeds_our_sweeps_once(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    monkeypatch.setenv("LEADERBOARD_PROJECT_RUNS", str(runs))
    engine = create_db_engine(f"sqlite:///{tmp_path / 'board.db'}")
    upgrade(engine, "0004_result_n_honest")
    for strength in TABLES:  # the paper's seed, which states neither setting: same content hash
        seed = paper_submission(strength)
        store_raw(engine, json.loads(seed.model_dump_json()), digest=seed.content_hash())
    ours = store_raw(engine, submission(source="rrdemo"))  # a sweep seeded without them
    store_raw(engine, submission([result_row(adversary="contextual")]), status="pending")
    kept = [r for r in _results(engine) if r["submission_id"] != ours]
    subs = _submissions(engine)

    upgrade(engine, "0005_result_prompt_style_eos")
    assert current_revision(engine) == "0005_result_prompt_style_eos"
    after = _results(engine)
    assert after == [{**r, "prompt_style": None, "eos_policy": None} for r in kept]
    assert _submissions(engine) == {i: s for i, s in subs.items() if i != ours}
    # The committed sweep, now labelled, is seeded once, at head, with the paper's tables.
    upgrade(engine)
    labelled = result_row(config_hash="ours", prompt_style="step-by-step", eos_policy="pass")
    (runs / "sweep").mkdir(parents=True)
    (runs / "sweep" / "submission.json").write_bytes(
        encode(submission([labelled], source="rrdemo"))
    )
    factory = make_sessionmaker(engine)
    assert run_transaction(factory, service.seed_board) == len(TABLES) + 1
    board = run_transaction(factory, lambda s: service.board_rows(s, include_all=True))
    assert len(board) == paper_row_count() + 2
    assert [(r.source, r.prompt_style, r.eos_policy) for r in board if r.source != "paper"] == [
        ("local_run", None, None),
        ("rrdemo", "step-by-step", "pass"),
    ]
    engine.dispose()


def test_migration_0006_adds_estimator_superseded_and_provenance_and_reseeds_once(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEADERBOARD_PROJECT_RUNS", str(tmp_path / "none"))  # the paper's seeds only
    monkeypatch.setenv(service.ADMIN_TOKEN_ENV, "sesame")
    engine = create_db_engine(f"sqlite:///{tmp_path / 'board.db'}")
    upgrade(engine, "0005_result_prompt_style_eos")
    for doc in _paper_docs(schema_version=3):  # seeded by the older rrdemo
        store_raw(engine, doc)
    user = store_raw(engine, submission([result_row(), result_row(dataset="logic3")]))
    kept = [r for r in _results(engine) if r["submission_id"] == user]
    submitted = _submissions(engine)[user]

    upgrade(engine)
    assert current_revision(engine) == head_revision()  # through 0006 and the paired counts
    after = _results(engine)
    new = {"estimator": None, "superseded": None, "maj_only": None, "rrmaj_only": None}
    assert after == [{**r, **new} for r in kept]  # seeds gone
    assert _submissions(engine) == {user: {**submitted, "provenance": None}}
    factory = make_sessionmaker(engine)
    assert run_transaction(factory, service.seed_board) == len(TABLES)
    board = run_transaction(factory, lambda s: service.board_rows(s, include_all=True))
    assert len(board) == paper_row_count() + len(kept)  # the paper's tables once, not twice
    assert {r.estimator for r in board if r.source == "paper"} == {"pool-draws"}
    mine = [r for r in board if r.submission_id == user]
    assert {r.standing for r in mine} == {"not ranked: estimator not stated"}
    # An admin may now mark a submission superseded; the audit log's check admits it.
    message = run_transaction(
        factory, lambda s: service.moderate(s, user, "supersede", "sesame", "rerun with 80")
    )
    assert "superseded" in message
    board = run_transaction(factory, lambda s: service.board_rows(s, include_all=True))
    assert {r.standing for r in board if r.submission_id == user} == {"superseded: rerun with 80"}

    downgrade(engine, "0005_result_prompt_style_eos")
    assert _results(engine) == kept and _submissions(engine) == {user: submitted}
    with engine.connect() as connection:
        actions = connection.exec_driver_sql("SELECT action FROM audit_log").all()
    assert actions == []  # the supersede the older code cannot read is gone with its columns
    engine.dispose()
