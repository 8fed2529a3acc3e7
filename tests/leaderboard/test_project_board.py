"""The board's lines for the project's own model say what the README's pooled row says: the same
estimator (the stratified paired bootstrap over questions) on the same counts gives the same
number, and no interval the board shows for it excludes 0 where the pooled interval includes it."""

from __future__ import annotations

from pathlib import Path

from leaderboard import service
from leaderboard.db import run_transaction
from leaderboard.ranking import pooled_line, rank_models
from rrdemo.report.pool_report import pool_logs, pool_seed, run_name
from rrdemo.study.file import load_study

ROOT = Path(__file__).resolve().parents[2]
MODEL = "qwen2.5-coder-1.5b"


def _pool():
    study = load_study(ROOT / "assets" / "evidence_pool" / "study.yaml")
    label = study.settings["config"]
    return study, label, pool_logs(list(study.pooled), label)


def test_the_boards_rows_pool_to_the_readmes_number(factory) -> None:
    study, label, pool = _pool()
    rows = [r for r in run_transaction(factory, service.board_rows) if r.model == MODEL]
    picked = []
    for name in pool.pooled_names:
        found = [
            r for r in rows if r.label == label and r.provenance == f"assets/{name}/study.yaml"
        ]
        assert len(found) == 1, name  # every pooled run publishes its row, with its counts
        picked.append(found[0])
    names = [run_name(p) for p in study.pooled]
    assert pooled_line(picked, pool_seed(label, names)) == pool.pooled


def test_no_line_of_the_model_excludes_0_where_the_pool_includes_it(factory) -> None:
    _, _, pool = _pool()
    assert pool.pooled is not None and pool.pooled.lo <= 0 <= pool.pooled.hi
    scores = [s for s in rank_models(run_transaction(factory, service.board_rows))]
    mine = [s for s in scores if s.model == MODEL]
    assert mine, "the project's rows are on the board"
    for score in mine:
        assert score.intervals == "paired", score.tasks  # the questions' sampling, not the rows'
        for ci in (score.mean_gain_ci, score.asymmetric_yield_ci):
            assert ci is None or ci.lo <= 0 <= ci.hi, (score.tasks, ci)
