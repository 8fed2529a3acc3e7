"""The board's line for the project's own model says what the README's pooled row says: the same
estimator (the stratified paired bootstrap over questions, each counted once) on the same runs
gives the same numbers, computed here from the committed logs; the run that shares questions is
shown and not pooled; and no other line of the model averages RRMaj - MAJ over rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard import present, service
from leaderboard.db import run_transaction
from leaderboard.ranking import POOLED_ESTIMATOR, filter_rows, pooled_lines, rank_models
from rrdemo.report.pool_report import pool_logs, run_name
from rrdemo.study.file import load_study
from tests.test_results_table import COLUMNS, POOLED, results_table

ROOT = Path(__file__).resolve().parents[2]
MODEL = "qwen2.5-coder-1.5b"


@pytest.fixture
def project_rows(monkeypatch, lb_env):
    """The rows of a board seeded with the committed project runs (the suite leaves them out)."""
    monkeypatch.setenv(service.PROJECT_RUNS_ENV, str(ROOT / "leaderboard" / "project_runs"))
    factory = service.open_leaderboard(lb_env)
    yield run_transaction(factory, service.board_rows)
    factory.kw["bind"].dispose()


def _pool():
    """The evidence pool computed now from the committed logs its study names."""
    study = load_study(ROOT / "assets" / "evidence_pool" / "study.yaml")
    label = study.settings["config"]
    return label, pool_logs(list(study.pooled), label)


def _line(rows, label):
    (line,) = [x for x in pooled_lines(rows) if x.model == MODEL and x.label == label]
    return line


def _study(row) -> str:
    """The run a board row comes from, named as the pool names it (its study's folder)."""
    return run_name(ROOT / (row.provenance or "").replace("study.yaml", "log.jsonl"))


def test_the_boards_line_is_the_pool_of_the_committed_logs(project_rows) -> None:
    label, pool = _pool()
    line = _line(project_rows, label)
    assert line.estimate == pool.pooled  # every number: delta, interval, p, power, resamples
    assert sorted(_study(r) for r in line.rows) == sorted(pool.pooled_names)
    (shown,) = [r.run.name for r in pool.runs if r.left_out]  # the run on shared questions
    (left,) = line.left_out
    passed = [r for r in project_rows if _study(r) == shown and r.label == label]
    assert f"submission #{passed[0].submission_id}:" in left


def test_the_tabs_pooled_line_reads_as_the_readmes_pooled_row(project_rows) -> None:
    label, _ = _pool()
    frame = present.pooled_frame(pooled_lines(project_rows))
    (cells,) = frame[(frame["model"] == MODEL) & (frame["config"] == label)].to_dict("records")
    readme = results_table((ROOT / "README.md").read_text(encoding="utf-8"))[1:]
    (pooled,) = [dict(zip(COLUMNS, c, strict=True)) for c in readme if c[0] == POOLED]
    same = ["questions", "MAJ", "RRMaj", "RRMaj - MAJ [95%]", "McNemar p", "verdict"]
    same.append("smallest lead detectable (80% power)")
    assert {k: str(cells[k if k in cells else f"{k} %"]) for k in same} == {
        k: pooled[k] for k in same
    }
    assert cells["estimator"] == POOLED_ESTIMATOR and "stratified" in POOLED_ESTIMATOR
    assert "(pooled into one line)" in cells["prompt styles"]  # direct and step-by-step, said


def test_no_line_of_the_model_averages_delta_over_rows(project_rows) -> None:
    label, pool = _pool()
    mine = [s for s in rank_models(project_rows) if s.model == MODEL]
    assert {s.tasks for s in mine} == {"the paper's tasks", "generated, beyond the paper"}
    for score in mine:  # RRMaj's interval resamples each row's questions; no Delta of rows
        assert score.intervals == "paired" and score.rrmaj_majority_ci is not None
        assert score.mean_gain is None and score.asymmetric_yield is None
    frame = present.readable(present.ranking_frame(mine))
    assert set(frame["mean gain %"]) == {"-"}
    # a task filtered alone: its line is that run's own row of the pool (its report's seed)
    for run in pool.runs:
        if run.left_out is None:
            rows = filter_rows(project_rows, dataset=run.run.task)
            assert _line(rows, label).estimate == run.estimate, run.run.name
