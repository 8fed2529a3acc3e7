"""Rows on the generated tasks (arith1..arith12, beyond the paper) on the board: a submission may
name them, a real SQLite board stores and shows them labelled, and they are ranked apart, so they
never move a model's averages or rank on the paper's six tasks."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from leaderboard import cli, present, service
from leaderboard.db import run_transaction
from leaderboard.ranking import accuracy_by_rho, rank_models
from rrdemo.cli import main as rrdemo_main
from rrdemo.report.submission import SubmissionRejected, parse_submission
from rrdemo.tasks.generated import GENERATED_NAMES
from tests.support.fakes import fake_run
from tests.support.samples import MODEL_A, board_row, encode, result_row, submission

LABEL = "arith2 (generated, beyond the paper)"
BEYOND = "generated, beyond the paper"
REFUSAL = (
    "results[0].dataset: unknown dataset; allowed: the paper's gsm8k, aqua, math500, logic3, "
    "logic7, track7, or arith1..arith12 (generated, beyond the paper)"
)


def _arith2_doc(model: str) -> dict:
    """A submission of `model` on arith2 whose numbers would move any average they entered."""
    rows = [
        result_row(
            model=model,
            agent_models=[model] * 5,
            dataset="arith2",
            n_corrupted=c,
            n_honest=5 - c,
            corrupted_agents=list(range(c)),
            maj_accuracy=0.0,
            rrmaj_accuracy=1.0,
            maj_ci=None,
        )
        for c in (1, 3, 4)
    ]
    return submission(rows, submitter="evidence")


def test_a_submission_may_name_every_generated_task() -> None:
    for name in GENERATED_NAMES:
        parsed = parse_submission(encode(submission([result_row(dataset=name)])))
        assert parsed.results[0].dataset == name


@pytest.mark.parametrize("name", ["arith99", "arith", "arith0", "arith13", "Arith2", "demo"])
def test_other_dataset_names_are_refused_naming_both_families(name: str) -> None:
    with pytest.raises(SubmissionRejected) as caught:
        parse_submission(encode(submission([result_row(dataset=name)])))
    assert caught.value.reasons == [REFUSAL]


def test_generated_rows_are_ranked_apart_and_leave_the_paper_scores_alone() -> None:
    arith = [replace(r, dataset="arith2", maj_accuracy=0.0, rrmaj_accuracy=1.0) for r in MODEL_A]
    paper_only = rank_models(MODEL_A)
    ranked = rank_models(arith + MODEL_A)  # generated rows first: the order must not matter
    assert ranked[:1] == paper_only
    generated = ranked[1]
    assert (generated.model, generated.tasks) == ("org/a", BEYOND)
    assert generated.rrmaj_majority == 1.0 and generated.mean_gain == 1.0
    frame = present.ranking_frame(ranked)
    assert frame[["rank", "model", "tasks"]].values.tolist() == [
        ["1", "org/a", "the paper's tasks"],
        ["1", "org/a", BEYOND],
    ]
    lines = accuracy_by_rho(arith + MODEL_A)
    assert lines["org/a"] == accuracy_by_rho(MODEL_A)["org/a"]
    assert lines[f"org/a ({BEYOND})"][1] == (0.2, 0.0, 1.0)


def test_a_generated_row_shows_labelled_and_a_paper_row_bare() -> None:
    rows = [board_row("org/a", 3, 2, 0.2, 0.6, dataset=d) for d in ("arith2", "gsm8k")]
    assert present.board_frame(rows)["dataset"].tolist() == [LABEL, "gsm8k"]
    assert [r.beyond_the_paper for r in rows] == [True, False]


def test_a_board_stores_shows_and_ranks_arith2_apart_from_the_paper(
    factory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    before = run_transaction(factory, service.board_rows)
    model = before[0].model  # a model the paper ranks: generated rows must not move its score
    outcome = run_transaction(factory, lambda s: service.submit(s, encode(_arith2_doc(model))))
    monkeypatch.setenv(service.ADMIN_TOKEN_ENV, "secret")
    run_transaction(
        factory, lambda s: service.moderate(s, outcome.submission_id, "approve", "secret")
    )
    rows = run_transaction(factory, service.board_rows)
    added = [r for r in rows if r.submission_id == outcome.submission_id]
    assert [r.dataset for r in added] == ["arith2"] * 3
    shown = present.board_frame(rows)["dataset"]
    assert shown[shown == LABEL].size == 3 and set(shown) - {LABEL} == {r.dataset for r in before}
    ranked = rank_models(rows)
    paper = [s for s in ranked if s.tasks != BEYOND]
    assert paper == [s for s in rank_models(before) if s.tasks != BEYOND]  # unchanged
    ours = [s for s in ranked if s.tasks == BEYOND and s.model == model]
    assert [s.rrmaj_majority for s in ours] == [1.0]
    capsys.readouterr()
    assert cli.main(["list", "--task", "arith2", "--format", "table"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert len(table) == 4 and all(LABEL in line for line in table[1:])


def test_an_exported_run_on_a_generated_task_seeds_the_board_labelled(
    lb_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = fake_run(tmp_path / "log.jsonl", ("0c3t", "1c2t", "2c1t", "3c0t"), task_name="arith2")
    out = tmp_path / "runs" / "evidence" / "submission.json"
    out.parent.mkdir(parents=True)
    argv = ["export", str(log), "--submitter", "rrdemo", "--source", "rrdemo", "--force"]
    assert rrdemo_main([*argv, "--notes", "x", "--out", str(out)]) == 0
    assert {r["dataset"] for r in json.loads(out.read_text())["results"]} == {"arith2"}
    monkeypatch.setenv(service.PROJECT_RUNS_ENV, str(tmp_path / "runs"))
    factory = service.open_leaderboard(lb_env)
    try:
        rows = run_transaction(factory, service.board_rows)
    finally:
        factory.kw["bind"].dispose()
    ours = [r for r in rows if r.source == "rrdemo"]
    assert len(ours) == 4 and {r.dataset_label for r in ours} == {LABEL}
