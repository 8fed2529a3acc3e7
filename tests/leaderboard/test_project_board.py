"""The board's lines for the project's own model say what the README's pooled row says: the same
estimator (the stratified paired bootstrap over questions) on the same counts gives the same
number, and no interval the board shows for it excludes 0 where the pooled interval includes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard import service
from leaderboard.db import run_transaction
from leaderboard.ranking import pooled_line, rank_models
from rrdemo.report.pool_report import pool_logs, pool_seed, run_name
from rrdemo.study.file import load_study

ROOT = Path(__file__).resolve().parents[2]
MODEL = "qwen2.5-coder-1.5b"


@pytest.fixture
def project_board(monkeypatch, lb_env):
    """A board seeded with the committed project runs (the suite's default leaves them out)."""
    monkeypatch.setenv(service.PROJECT_RUNS_ENV, str(ROOT / "leaderboard" / "project_runs"))
    return service.open_leaderboard(lb_env)


def _pool():
    study = load_study(ROOT / "assets" / "evidence_pool" / "study.yaml")
    label = study.settings["config"]
    return study, label, pool_logs(list(study.pooled), label)


def test_the_boards_rows_pool_to_the_readmes_number(project_board) -> None:
    study, label, pool = _pool()
    rows = [r for r in run_transaction(project_board, service.board_rows) if r.model == MODEL]
    picked = []
    for name in pool.pooled_names:
        found = [
            r for r in rows if r.label == label and r.provenance == f"assets/{name}/study.yaml"
        ]
        assert len(found) == 1, name  # every pooled run publishes its row, with its counts
        picked.append(found[0])
    names = [run_name(p) for p in study.pooled]
    assert pooled_line(picked, pool_seed(label, names)) == pool.pooled


def test_every_line_of_the_model_carries_the_questions_sampling(project_board) -> None:
    """Its lines' intervals resample each row's questions (not the rows). The paper-task line
    (AQuA 3c2t and 4c1t, Logic3 3c2t) lies above 0 under this estimator while the pool of all four
    runs does not: docs/evidence.md, "The pooled answer", says why the two differ."""
    _, _, pool = _pool()
    assert pool.pooled is not None and pool.pooled.lo <= 0 <= pool.pooled.hi
    rows = run_transaction(project_board, service.board_rows)
    mine = [s for s in rank_models(rows) if s.model == MODEL]
    assert {s.tasks for s in mine} == {"the paper's tasks", "generated, beyond the paper"}
    for score in mine:
        assert score.intervals == "paired", score.tasks  # the questions' sampling, not the rows'
        assert score.mean_gain_ci is not None
        assert score.mean_gain_ci.lo <= score.mean_gain <= score.mean_gain_ci.hi
