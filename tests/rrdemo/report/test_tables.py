"""rrdemo.report.tables: the paper's tables on hand-built outcome rows whose right answers follow from the scenario."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rrdemo.report.tables import (
    asymmetric_yield,
    k_ablation,
    m_scaling,
    main_table,
    rho_curve,
    vote_rates,
)
from rrdemo.runs.log import RunLog, read_run
from tests.support.outcomes import GOLD, TARGET, row, trap

ROOT = Path(__file__).resolve().parents[3]


# -- the main table -----------------------------------------------------------------------------------
def test_main_table_shows_maj_collapse_and_rr_rescue_in_the_papers_layout():
    rows = main_table([r for c in (0, 1, 3, 5) for r in trap(c)])
    assert len(rows) == 1
    t = rows[0]
    assert (t.n, t.m) == (5, 5)
    assert t.ceiling.maj.mean == 1.0 and t.floor.maj.mean == 0.0
    assert [cell.label for cell in t.cells] == ["1c4t", "3c2t"]
    minority, majority = t.cells
    assert minority.maj.mean == 1.0  # 4 truthful votes beat 1 corrupted vote
    assert majority.maj.mean == 0.0  # 3 corrupted votes beat 2 truthful votes
    assert majority.rrmaj.mean == 1.0 and majority.delta.mean == 1.0
    assert minority.delta.mean == 0.0


def test_intervals_bracket_the_mean_and_widen_with_disagreement():
    rows = []
    for q in range(20):  # half the questions right for RR, half wrong
        for j in range(5):
            rows.append(row(2, 5, f"q{q}", "MAJ", j, GOLD, corrupted=j < 2))
            rows.append(row(2, 5, f"q{q}", "RRMaj", j, GOLD if q % 2 else TARGET, corrupted=j < 2))
    cell = main_table(rows)[0].cells[0]
    assert cell.rrmaj.mean == pytest.approx(0.5)
    assert cell.rrmaj.lo < 0.5 < cell.rrmaj.hi
    assert cell.maj.lo == cell.maj.hi == 1.0
    assert cell.delta.lo < -0.5 + 1e-9 and cell.delta.hi > -0.5 - 1e-9
    assert cell.rrmaj.n_questions == 20


# -- M scaling ------------------------------------------------------------------------------------------
def test_m_scaling_shows_the_condorcet_collapse_of_maj_and_the_rise_of_rrmaj():
    points = m_scaling(trap(3, m_star=10, rr_right=7))
    at = {(p.method, p.m): p for p in points if p.task == "all"}
    assert sorted({m for _, m in at}) == [1, 5, 10]
    assert at[("MAJ", 1)].mean == pytest.approx(
        2 / 5
    )  # t/N P(truthful right), corrupted never right
    assert at[("MAJ", 5)].mean == 0.0 and at[("MAJ", 10)].mean == 0.0
    assert at[("RRMaj", 1)].mean == pytest.approx(0.7)  # p_rr
    assert at[("RRMaj", 10)].mean == 1.0  # 7 right trajectories outvote 3
    assert at[("RRMaj", 1)].mean < at[("RRMaj", 5)].mean <= at[("RRMaj", 10)].mean
    assert at[("Delta", 10)].mean == pytest.approx(1.0)


def test_m_scaling_averages_datasets_trial_by_trial():
    rows = trap(3, m_star=5, task="logic3") + trap(3, m_star=5, rr_right=0, task="gsm8k")
    points = m_scaling(rows)
    mean = {(p.task, p.method, p.m): p.mean for p in points}
    for m in (1, 5):
        expect = (mean[("logic3", "RRMaj", m)] + mean[("gsm8k", "RRMaj", m)]) / 2
        assert mean[("all", "RRMaj", m)] == pytest.approx(expect)


# -- yield, rho, K ---------------------------------------------------------------------------------
def test_asymmetric_yield_averages_deltas_on_each_side_of_one_half():
    table = main_table([r for c in (0, 1, 2, 3, 4, 5) for r in trap(c, rr_right=4)])
    by_c = {cell.c: cell.delta.mean for cell in table[0].cells}
    y = [y for y in asymmetric_yield(table) if y.task == "logic3"][0]
    assert (y.n_safe, y.n_compromised) == (2, 2)
    assert y.safe_delta == pytest.approx((by_c[1] + by_c[2]) / 2)
    assert y.compromised_delta == pytest.approx((by_c[3] + by_c[4]) / 2)
    assert y.compromised_delta > 0  # RRMaj rescues where MAJ collapses


def test_rho_curve_has_both_methods_at_every_rho_and_a_mean_over_datasets():
    rows = [
        r
        for c in (0, 1, 3, 5)
        for t in ("logic3", "gsm8k")
        for r in trap(c, task=t, rr_right=4 if t == "gsm8k" else 5)
    ]
    points = rho_curve(main_table(rows))
    keys = {(p.task, p.method) for p in points}
    assert keys == {(t, m) for t in ("logic3", "gsm8k", "all") for m in ("MAJ", "RRMaj")}
    rhos = {key: sorted(p.rho for p in points if (p.task, p.method) == key) for key in keys}
    for key, values in rhos.items():
        assert values == [0.0, 0.2, 0.6, 1.0], key
    by = {(p.task, p.method, p.rho): p.accuracy for p in points}
    assert by[("all", "RRMaj", 0.6)] == pytest.approx(
        (by[("logic3", "RRMaj", 0.6)] + by[("gsm8k", "RRMaj", 0.6)]) / 2
    )
    assert by[("logic3", "MAJ", 0.6)] == 0.0


def test_k_ablation_reads_rrmaj_accuracy_per_k():
    rows = trap(2, n=3, m_star=3, k=10, rr_right=0) + trap(2, n=3, m_star=3, k=150, rr_right=3)
    points = k_ablation(main_table(rows))
    rr = {(p.task, p.k): p.rrmaj for p in points if p.label == "2c1t"}
    assert rr[("logic3", 10)] == 0.0 and rr[("logic3", 150)] == 1.0
    assert rr[("all", 150)] == 1.0
    maj = {p.k: p.maj for p in points if p.label == "2c1t" and p.task == "logic3"}
    assert maj[10] == maj[150]  # K does not touch MAJ


# -- the run's own votes ----------------------------------------------------------------------------------
def _done(condition: str, qid: str, maj: tuple[bool, bool], rr: tuple[bool, bool]) -> dict:
    votes = {m: {"correct": ok, "fooled": f} for m, (ok, f) in (("MAJ", maj), ("RRMaj", rr))}
    return {"type": "done", "condition": condition, "question_id": qid, "votes": votes}


def test_vote_rates_score_each_conditions_recorded_votes_over_its_finished_questions():
    conditions = {"a": {"key": "a", "c": 3, "n": 5}, "b": {"key": "b", "c": 0, "n": 5}}
    records = [
        _done("a", "q0", maj=(False, True), rr=(True, False)),
        (None, {"type": "trajectory", "condition": "a"}),  # not a finished unit: ignored
        _done("b", "q0", maj=(True, False), rr=(True, False)),
        _done("a", "q1", maj=(False, False), rr=(False, True)),
        _done("a", "q2", maj=(True, False), rr=(True, False)),
    ]
    records = [r if isinstance(r, tuple) else (i, r) for i, r in enumerate(records)]
    rates = vote_rates(RunLog(Path("run.jsonl"), {}, conditions, records))
    a, b = rates  # in log order; "b" has its one question
    assert a.condition is conditions["a"] and a.questions == 3
    assert a.accuracy == pytest.approx({"MAJ": 1 / 3, "RRMaj": 2 / 3})
    assert a.fooled == pytest.approx({"MAJ": 1 / 3, "RRMaj": 1 / 3})
    assert (b.questions, b.accuracy, b.fooled) == (
        1,
        {"MAJ": 1.0, "RRMaj": 1.0},
        {"MAJ": 0.0, "RRMaj": 0.0},
    )


def test_vote_rates_of_a_log_with_no_finished_question_are_empty():
    assert vote_rates(RunLog(Path("run.jsonl"), {}, {"a": {"key": "a"}}, [])) == []


def test_the_tables_do_not_depend_on_how_configs_are_hashed() -> None:
    """Renaming every condition (a new config field moves every hash) leaves every number as it is:
    the draws are seeded from the condition's name in the tables, not from its key."""
    outcomes = read_run(ROOT / "assets" / "experiment_small_shuffled.jsonl").outcomes
    renamed = [replace(o, condition=f"{o.task}:renamed-{o.condition[::-1]}") for o in outcomes]
    assert main_table(renamed) == main_table(outcomes)
    assert m_scaling(renamed) == m_scaling(outcomes)
