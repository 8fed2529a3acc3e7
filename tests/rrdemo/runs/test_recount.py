"""Question counts per config (`n_by_config`) and resuming a log under other counts: the log's
header is rewritten, its finished units kept byte for byte, and any other change still refused."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rrdemo.errors import RRError
from rrdemo.runs.log import read_log
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import Plan, plan_sweep
from tests.support.fakes import fake_plan, fake_pool


def counted(counts: dict[str, int], m_star: int = 3) -> Plan:
    """The fake plan (0c3t, 2c1t on three questions) with fewer questions for some configs, as
    `plan_sweep` builds one: the first ones of the task's questions, the counts in its sweep."""
    plan = fake_plan(m_star=m_star)
    conditions = tuple(
        replace(c, questions=c.questions[: counts.get(c.config.label, len(c.questions))])
        for c in plan.conditions
    )
    sweep = {**plan.sweep, **({"n_by_config": counts} if counts else {})}
    return Plan(sweep, conditions)


def units(path) -> set[tuple[str, str]]:
    return read_log(path).done


def test_a_config_runs_the_first_of_the_tasks_questions_and_the_units_add_up() -> None:
    raw = {"tasks": "logic3", "configs": "3c2t,0c5t,5c0t", "strengths": "strong", "n": 12}
    full = plan_sweep(raw)
    fewer = plan_sweep({**raw, "n_by_config": {"0c5t": 5, "5c0t": 12}})
    assert fewer.sweep["n_by_config"] == {"0c5t": 5}  # n itself is no change: not named
    assert [len(c.questions) for c in fewer.conditions] == [12, 5, 12]
    assert fewer.n_units == 29
    whole = [q.qid for q in full.conditions[1].questions]
    assert [q.qid for q in fewer.conditions[1].questions] == whole[:5]
    assert "n_by_config" not in full.sweep  # a sweep without counts reads as it always did
    text = plan_sweep({**raw, "n_by_config": "0c5t=5"})
    assert text.sweep == fewer.sweep


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ({"2c3t": 4}, r"names 2c3t, which is not one of the sweep's configs \(3c2t, 0c5t\)"),
        ({"0c5t": 13}, r"0c5t is 13, more than the sweep's n \(12\)"),
        ({"0c5t": 0}, "must be at least 1"),
        ({"0c5t": "many"}, "must be a whole number"),
        ("0c5t:4", "must read like 0c5t=40,1c4t=40"),
        (["0c5t", 4], "must map configs to question counts"),
    ],
)
def test_bad_counts_are_refused_naming_what_is_allowed(counts, message) -> None:
    with pytest.raises(RRError, match=message):
        plan_sweep({"tasks": "logic3", "configs": "3c2t,0c5t", "n": 12, "n_by_config": counts})


def test_a_log_grows_and_shrinks_its_counts_keeping_every_finished_unit(tmp_path) -> None:
    log = tmp_path / "run.jsonl"
    short = counted({"2c1t": 1})
    run_plan(short, log, fake_pool(), progress=False)
    first = log.read_bytes()
    assert len(units(log)) == 4
    grown = counted({})  # 2c1t now runs all three questions
    summary = run_plan(grown, log, fake_pool(), progress=False)
    assert (summary.units_skipped, summary.units_run) == (4, 2)
    after = read_log(log)
    assert after.header["sweep"] == grown.sweep
    assert [len(c["questions"]) for c in after.header["conditions"]] == [3, 3]
    body = first[first.index(b"\n") + 1 :]
    assert log.read_bytes().split(b"\n", 1)[1].startswith(body)  # old records byte for byte
    # cut back to what it holds: nothing to run, the header names the counts again
    again = run_plan(counted({"0c3t": 3}), log, fake_pool(), progress=False)
    assert again.units_run == 0


def test_counts_that_drop_finished_units_are_refused_and_the_log_kept(tmp_path) -> None:
    log = tmp_path / "run.jsonl"
    run_plan(counted({}), log, fake_pool(), progress=False)
    before = log.read_bytes()
    with pytest.raises(RRError, match=r"2 finished unit\(s\) of 2c1t lie beyond the new question"):
        run_plan(counted({"2c1t": 1}), log, fake_pool(), progress=False)
    assert log.read_bytes() == before


def test_other_changes_beside_the_counts_are_still_refused(tmp_path) -> None:
    log = tmp_path / "run.jsonl"
    run_plan(counted({"2c1t": 1}), log, fake_pool(), progress=False)
    before = log.read_bytes()
    with pytest.raises(RRError, match="rerun with the same settings to resume it"):
        run_plan(counted({}, m_star=2), log, fake_pool(), progress=False)
    assert log.read_bytes() == before


def test_other_questions_under_the_same_settings_are_refused(tmp_path) -> None:
    """A condition whose new questions are not a longer or shorter run of its old ones."""
    log = tmp_path / "run.jsonl"
    short = counted({"2c1t": 1})
    run_plan(short, log, fake_pool(), progress=False)
    before = log.read_bytes()
    plan = counted({"2c1t": 2})
    moved = tuple(
        replace(c, questions=c.questions[1:3]) if c.config.label == "2c1t" else c
        for c in plan.conditions
    )
    with pytest.raises(RRError, match="would run other questions, not a longer or shorter run"):
        run_plan(Plan(plan.sweep, moved), log, fake_pool(), progress=False)
    assert log.read_bytes() == before


def test_a_half_finished_unit_is_dropped_when_the_counts_change(tmp_path) -> None:
    log = tmp_path / "run.jsonl"
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_plan(counted({"2c1t": 1}), log, fake_pool(fail_after=12), progress=False)
    partial = read_log(log)
    assert log.stat().st_size > partial.keep_bytes  # trajectory lines of an unfinished unit
    run_plan(counted({}), log, fake_pool(), progress=False)
    done = [r for _, r in read_log(log).records if r["type"] == "done"]
    assert len(done) == len({(r["condition"], r["question_id"]) for r in done}) == 6
