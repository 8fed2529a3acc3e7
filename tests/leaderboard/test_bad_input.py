"""Malformed and hostile submissions: each is rejected with its own message, the database is
unchanged by rejected files (row counts and a checksum), and hostile text that is valid is
stored as plain data and shown as text."""

from __future__ import annotations

import json
from typing import Any

import pytest

from leaderboard import present, service
from leaderboard.db import run_transaction
from rrdemo.report.submission import MAX_FILE_BYTES, SubmissionRejected, parse_submission
from tests.support.samples import db_checksum, encode, result_row, submission


def _without(doc: dict[str, Any], key: str) -> dict[str, Any]:
    doc.pop(key)
    return doc


def _row_without(key: str) -> dict[str, Any]:
    row = result_row()
    row.pop(key)
    return submission([row])


def _row(**overrides: Any) -> bytes:
    return encode(submission([result_row(**overrides)]))


def _replace(doc: dict[str, Any], old: str, new: str) -> bytes:
    return json.dumps(doc).replace(old, new).encode("utf-8")


SCRIPT = "<script>alert('pwned')</script>"
SQL = "x'); DROP TABLE results; --"

# (case id, file bytes, a fragment the rejection message must contain)
BAD_FILES: list[tuple[str, bytes, str]] = [
    ("schema version 2", encode(submission(schema_version=2)), "schema_version: version 2 is not supported (this server accepts 4)"),
    ("schema version 3 (no estimator)", encode(submission(schema_version=3)), "schema_version: version 3 is not supported (this server accepts 4)"),
    ("schema version as text", encode(submission(schema_version="3")), "schema_version: Input should be a valid integer"),
    ("schema version missing", encode(_without(submission(), "schema_version")), "schema_version: required field is missing"),
    ("submitter missing", encode(_without(submission(), "submitter")), "submitter: required field is missing"),
    ("results missing", encode(_without(submission(), "results")), "results: required field is missing"),
    ("extra top-level field", encode(submission(is_admin=True)), "is_admin: unknown field"),
    ("extra row field", _row(secret="x"), "results[0].secret: unknown field"),
    ("row field missing", encode(_row_without("k")), "results[0].k: required field is missing"),
    ("estimator missing", encode(_row_without("estimator")), "results[0].estimator: required field is missing; say how the accuracies were computed: decisions"),
    ("unknown estimator", _row(estimator="vibes"), "results[0].estimator: unknown estimator; allowed: decisions"),
    ("provenance missing", encode(_without(submission(), "provenance")), "provenance: required field is missing"),
    ("empty provenance", encode(submission(provenance="  ")), "provenance must name the study file or log"),
    ("more questions than AQuA has", _row(dataset="aqua", n_questions=320, maj_accuracy=0.25, rrmaj_accuracy=0.5), "n_questions = 320, but aqua has 254 questions"),
    ("an accuracy no count of n questions gives", _row(n_questions=7, maj_accuracy=0.25, maj_ci=None), "maj_accuracy = 0.25 is not a whole number of the 7 questions"),
    ("interval leaving out its accuracy", _row(maj_ci=[0.3, 0.4]), "maj_ci [0.3, 0.4] does not contain maj_accuracy"),
    ("interval narrower than n allows", _row(n_questions=8, maj_ci=[0.24, 0.26]), "maj_ci [0.24, 0.26] is narrower than 8 questions allow"),
    ("interval without its accuracy", _row(maj_accuracy=None, n_corrupted=0, n_honest=5, corrupted_agents=[]), "maj_ci is given without maj_accuracy"),
    ("empty superseded reason", _row(superseded=" "), "superseded must give the reason"),
    ("MAJ accuracy above 1", _row(maj_accuracy=1.5), "results[0].maj_accuracy: must be a fraction between 0 and 1"),
    ("RRMaj accuracy negative", _row(rrmaj_accuracy=-0.1), "results[0].rrmaj_accuracy: must be a fraction between 0 and 1"),
    ("accuracy given in percent", _row(rrmaj_accuracy=88.3), "57.4% is 0.574"),
    ("interval outside [0, 1]", _row(rrmaj_ci=[0.2, 1.2]), "results[0].rrmaj_ci[1]: must be a fraction between 0 and 1"),
    ("interval reversed", _row(maj_ci=[0.4, 0.1]), "maj_ci must be [lo, hi] with lo <= hi"),
    ("c + t != N", _row(n_honest=3), "c + t must equal N: 3 + 3 != 5"),
    ("K = 0", _row(k=0), "k (K) = 0 is out of range; allowed 1..32768"),
    ("K too large", _row(k=100_000), "k (K) = 100000 is out of range"),
    ("M = 0", _row(m=0), "m (M) = 0 is out of range; allowed 1..256"),
    ("L = 0", _row(max_tokens=0), "max_tokens (L) = 0 is out of range"),
    ("N too large", _row(n_agents=500, n_honest=497, agent_models=["a/b"] * 500), "n_agents (N) = 500 is out of range"),
    ("no questions", _row(n_questions=0), "n_questions = 0 is out of range"),
    ("huge question count", _row(n_questions=10**30), "results[0]: n_questions = 10000000000000000000... is out of range"),
    ("unknown dataset", _row(dataset="mmlu"), "unknown dataset; allowed: the paper's gsm8k, aqua, math500"),
    ("unknown strength", _row(strength="extreme"), "unknown strength; allowed: none, moderate, strong, custom"),
    ("corrupted list too short", _row(corrupted_agents=[0, 1]), "corrupted_agents lists 2 agents; c = 3"),
    ("corrupted index out of range", _row(corrupted_agents=[0, 1, 7]), "corrupted_agents indices must be in 0..4"),
    ("corrupted index repeated", _row(corrupted_agents=[0, 0, 1]), "corrupted_agents repeats an agent index"),
    ("agent list too short", _row(agent_models=["a/b"]), "agent_models lists 1 models; N = 5"),
    ("missing RRMaj on a 3c2t row", _row(rrmaj_accuracy=None), "both required unless the row is a ceiling"),
    ("boolean as a count", _row(n_agents=True), "results[0].n_agents: Input should be a valid integer"),
    ("source paper is reserved", encode(submission(source="paper")), "reserved for the paper's seeded tables"),
    ("unknown source", encode(submission(source="admin")), "source: must be one of local_run, uploaded"),
    ("empty results", encode(submission([])), "results is empty"),
    ("same configuration twice", encode(submission([result_row(), result_row(maj_accuracy=0.5, maj_ci=None)])), "results[1] repeats the configuration of results[0]"),
    ("script in model name", _row(model=SCRIPT), "results[0].model: must be a hub id"),
    ("SQL in model name", _row(model=SQL), "results[0].model: must be a hub id"),
    ("script in config hash", _row(config_hash=SCRIPT), "results[0].config_hash: must be 1-128 characters"),
    ("empty submitter", encode(submission(submitter="   ")), "submitter must not be empty"),
    ("control characters in submitter", encode(submission(submitter="a\x00b")), "contains control characters"),
    ("notes too long", encode(submission(notes="x" * 5000)), "notes is 5000 characters long; at most 2000"),
    ("created is not a time", encode(submission(created="yesterday")), "created: Input should be a valid datetime"),
    ("created as a number", encode(submission(created=1_700_000_000)), "created: must be an ISO 8601 time as text"),
    ("created in year 9999", encode(submission(created="9999-01-01T00:00:00+00:00")), "created: lies in the future"),
    ("a key given twice", _replace(submission(), '"notes": ', '"notes": "a", "notes": '), "the key 'notes' appears twice in one object"),
    ("file over the size limit", encode(submission(notes="x" * (MAX_FILE_BYTES + 10))), f"the limit is {MAX_FILE_BYTES} bytes"),
    ("not UTF-8 (latin-1)", encode(submission(submitter="zoe")).replace(b"zoe", "zo\u00eb".encode("latin-1")), "not UTF-8 text"),
    ("UTF-16 file", json.dumps(submission()).encode("utf-16"), "not UTF-8 text"),
    ("truncated JSON", encode(submission())[:-40], "not valid JSON"),
    ("empty file", b"", "not valid JSON"),
    ("a JSON list", b"[1, 2, 3]", "must hold one JSON object"),
    ("a JSON string", b'"hello"', "must hold one JSON object"),
    ("number too large for a float", _replace(submission(), "0.25", "1e999"), "results[0].maj_accuracy: the number is too large"),
    ("integer with 5000 digits", _replace(submission(), '"n_questions": 40', '"n_questions": ' + "9" * 5000), "a number has too many digits"),
    ("NaN accuracy", _replace(submission(), "0.25", "NaN"), "NaN is not a number JSON allows"),
    ("absurd nesting", b"[" * 100_000 + b"]" * 100_000, "nesting is too deep"),
]  # fmt: skip


def test_there_are_at_least_thirty_distinct_bad_files() -> None:
    assert len(BAD_FILES) >= 30
    assert len({raw for _, raw, _ in BAD_FILES}) == len(BAD_FILES)


@pytest.mark.parametrize(("case", "raw", "expected"), BAD_FILES, ids=[c for c, _, _ in BAD_FILES])
def test_each_bad_file_is_rejected_with_its_message(case: str, raw: bytes, expected: str) -> None:
    with pytest.raises(SubmissionRejected) as caught:
        parse_submission(raw)
    reasons = caught.value.reasons
    assert any(expected in reason for reason in reasons), (case, reasons)
    # Messages are short lines and never echo a huge input back.
    assert all("\n" not in reason and len(reason) < 300 for reason in reasons)


def test_rejected_files_leave_the_database_unchanged(factory) -> None:
    before = run_transaction(factory, lambda s: db_checksum(s))
    for case, raw, _ in BAD_FILES:
        with pytest.raises(SubmissionRejected):
            run_transaction(factory, lambda s, raw=raw: service.submit(s, raw))
        assert run_transaction(factory, lambda s: db_checksum(s)) == before, case


def test_hostile_but_valid_text_is_stored_and_tabled_as_is_and_charted_escaped(factory) -> None:
    hostile_notes = f"{SQL} {SCRIPT} <img src=x onerror=alert(1)>"
    doc = submission(submitter=SCRIPT, notes=hostile_notes)
    outcome = run_transaction(factory, lambda s: service.submit(s, encode(doc)))
    assert outcome.created
    subs = run_transaction(factory, lambda s: service.list_submissions(s, status="pending"))
    assert [(s.submitter, s.notes) for s in subs] == [(SCRIPT, hostile_notes)]
    # The tables are intact: the SQL text did nothing.
    counts, _ = run_transaction(factory, lambda s: db_checksum(s))
    assert counts["results"] == 2 * 5 * 6 * 6 + 1

    rows = run_transaction(factory, lambda s: service.board_rows(s, include_all=True))
    frames = [present.board_frame(rows), present.pending_frame(subs)]
    # Table cells are text in the page (tests/ui/test_security_browser.py): escaped once, there.
    assert SCRIPT in set(frames[1]["submitter"]) and hostile_notes in set(frames[1]["notes"])
    for value in frames[0].astype(str).to_numpy().ravel():
        assert "&lt;" not in value and "&amp;" not in value
    figure = present.accuracy_figure(rows)  # plotly renders tags in names: escaped there
    assert all("<" not in trace.name for trace in figure.data if trace.name)
