"""The experiment runner: sweep validation, the JSONL log, and resuming with nothing lost or doubled."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from rrdemo.cli import main as cli_main
from rrdemo.errors import RRError
from rrdemo.runs.log import read_log
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import Plan, normalize_sweep, plan_sweep
from tests.support import processes
from tests.support.fakes import fake_plan, fake_pool

ROOT = Path(__file__).resolve().parents[3]


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def assert_exactly_once(path: Path, plan: Plan) -> None:
    """Every unit has one done line and exactly M* MAJ answers and M* RR trajectories."""
    recs = records(path)
    assert recs[0]["type"] == "header"
    done = Counter((r["condition"], r["question_id"]) for r in recs if r["type"] == "done")
    units = {(c.key, q.qid) for c in plan.conditions for q in c.questions}
    assert set(done) == units and set(done.values()) == {1}
    for cond in plan.conditions:
        for q in cond.questions:
            for method in ("MAJ", "RRMaj"):
                got = sorted(
                    r["trajectory"]
                    for r in recs
                    if r["type"] == "trajectory"
                    and (r["condition"], r["question_id"], r["method"]) == (cond.key, q.qid, method)
                )
                assert got == list(range(cond.config.resolved_m))


# -- the log ----------------------------------------------------------------------------------------
def test_log_records_every_trajectory_with_chunks_roles_votes_and_compute(tmp_path):
    plan = fake_plan()
    log = tmp_path / "run.jsonl"
    summary = run_plan(plan, log, fake_pool(), progress=False)
    assert summary.units_run == plan.n_units == 6
    assert_exactly_once(log, plan)
    recs = records(log)
    header = recs[0]
    assert [c["key"] for c in header["conditions"]] == [c.key for c in plan.conditions]
    assert header["conditions"][1]["label"] == "2c1t"
    traj = [r for r in recs if r["type"] == "trajectory"]
    for r in traj:
        assert r["chunks"], r
        for chunk in r["chunks"]:
            assert chunk["role"] in ("corrupted", "honest")
            assert chunk["agent"] in range(3)
        # the logged roles agree with the config: the first c seats are corrupted
        cond = next(c for c in plan.conditions if c.key == r["condition"])
        for chunk in r["chunks"]:
            assert (chunk["role"] == "corrupted") == (chunk["agent"] < cond.config.c)
        assert r["last_corrupted"] == (r["last_agent"] < cond.config.c)
    # scripted MAJ answers: a corrupted agent states the target, a truthful one the gold
    for r in traj:
        if r["method"] == "MAJ":
            assert r["answer"] == ("(C)" if r["last_corrupted"] else "(B)")
            assert r["fooled"] == r["last_corrupted"]
    done = [r for r in recs if r["type"] == "done"]
    for r in done:
        assert set(r["votes"]) == {"MAJ", "RRMaj"} and set(r["compute"]) == {"MAJ", "RRMaj"}
        assert sum(r["votes"]["MAJ"]["counts"].values()) + r["votes"]["MAJ"]["abstained"] == 3
        assert r["compute"]["RRMaj"]["decode_tokens"] > 0
    # each trajectory line is written before its unit's done line
    order = [(r["type"], r["question_id"], r["condition"]) for r in recs[1:]]
    for i, (kind, qid, cond) in enumerate(order):
        if kind == "trajectory":
            assert ("done", qid, cond) in order[i + 1 :]


def test_units_run_question_major_so_a_stopped_run_covers_every_condition(tmp_path):
    plan = fake_plan()
    log = tmp_path / "run.jsonl"
    run_plan(plan, log, fake_pool(), progress=False)
    done = [(r["condition"], r["question_id"]) for r in records(log) if r["type"] == "done"]
    position = {q.qid: j for c in plan.conditions for j, q in enumerate(c.questions)}
    keys = [c.key for c in plan.conditions]
    assert len(set(keys)) > 1 and len(position) > 1
    assert done == sorted(done, key=lambda u: (position[u[1]], keys.index(u[0])))
    first = len(keys)  # the first len(conditions) units: every condition once, on question 0
    assert sorted(c for c, _ in done[:first]) == sorted(keys)


def test_a_crash_then_resume_runs_each_unit_exactly_once(tmp_path):
    plan = fake_plan()
    log = tmp_path / "run.jsonl"
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_plan(plan, log, fake_pool(fail_after=40), progress=False)
    partial = read_log(log)
    assert 0 < len(partial.done) < plan.n_units
    # the crash left trajectory lines of an unfinished unit after the last done line
    assert log.stat().st_size > partial.keep_bytes
    summary = run_plan(plan, log, fake_pool(), progress=False)
    assert summary.units_skipped == len(partial.done)
    assert summary.units_run == plan.n_units - len(partial.done)
    assert_exactly_once(log, plan)
    # a third run has nothing left to do and changes nothing
    before = log.read_bytes()
    assert run_plan(plan, log, fake_pool(), progress=False).units_run == 0
    assert log.read_bytes() == before


# A run whose agents hang a few calls into the second unit: the parent kills it there, mid-unit,
# however slowly it polls (a run left going could otherwise finish before the kill).
_CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.support.fakes import FakeBackend, FakePool, fake_plan, obeys_injection
from rrdemo.runs.runner import run_plan
log, later = Path({log!r}), [0]
def script(prompt):
    if b'"type":"done"' in log.read_bytes():
        later[0] += 1
        if later[0] > 3:
            time.sleep(600)
    return obeys_injection(prompt)
run_plan(fake_plan(), log, FakePool(FakeBackend("obey", script)), progress=False)
"""


def test_a_killed_process_resumes_with_nothing_lost_or_duplicated(tmp_path):
    plan = fake_plan()
    log = tmp_path / "run.jsonl"
    child = processes.start([sys.executable, "-c", _CHILD.format(root=str(ROOT), log=str(log))])
    try:
        # A wait, not a speed check: the child's start-up and first unit take seconds on an idle
        # machine; 120 s leaves room for a loaded one.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if log.exists() and b'"type":"done"' in log.read_bytes():
                break
            time.sleep(0.05)
        else:
            pytest.fail("the child run wrote no finished unit in 120 s")
        os.kill(child.pid, signal.SIGKILL)
    finally:
        processes.stop(child)
    assert child.returncode == -signal.SIGKILL
    killed_at = read_log(log)
    assert len(killed_at.done) == 1 < plan.n_units  # killed inside the second unit
    run_plan(plan, log, fake_pool(), progress=False)
    assert_exactly_once(log, plan)


def test_a_half_written_last_line_is_dropped_on_resume(tmp_path):
    plan = fake_plan(labels=("1c2t",))
    log = tmp_path / "run.jsonl"
    with pytest.raises(RuntimeError):
        run_plan(plan, log, fake_pool(fail_after=20), progress=False)
    with log.open("ab") as fh:
        fh.write(b'{"type":"trajectory","condition":"cut sho')  # a kill in the middle of a write
    run_plan(plan, log, fake_pool(), progress=False)
    assert_exactly_once(log, plan)


def test_resuming_with_a_different_sweep_is_refused_and_the_log_kept(tmp_path):
    log = tmp_path / "run.jsonl"
    run_plan(fake_plan(), log, fake_pool(), progress=False)
    before = log.read_bytes()
    with pytest.raises(RRError, match="different sweep"):
        run_plan(fake_plan(m_star=2), log, fake_pool(), progress=False)
    assert log.read_bytes() == before


def test_a_foreign_file_is_never_overwritten(tmp_path):
    log = tmp_path / "notes.jsonl"
    log.write_text('{"hello": "world"}\n')
    with pytest.raises(RRError, match="not an rrdemo experiment log"):
        run_plan(fake_plan(), log, fake_pool(), progress=False)
    assert log.read_text() == '{"hello": "world"}\n'


# -- the sweep: validated up front ------------------------------------------------------------------
def test_sweep_defaults_expand_every_config_for_n():
    sweep = normalize_sweep({"tasks": "Logic3", "n_agents": 3})
    assert sweep["tasks"] == ["logic3"]
    assert sweep["configs"] == ["0c3t", "1c2t", "2c1t", "3c0t"]


def test_ensemble_syntax_marks_corrupted_seats():
    sweep = normalize_sweep({"tasks": "logic3", "ensembles": ["smollm2*, gemma3-270m"]})
    assert sweep["ensembles"][0] == [
        {"model": "smollm2", "corrupted": True},
        {"model": "gemma3-270m", "corrupted": False},
    ]


def test_plan_expands_tasks_configs_strengths_and_k_with_one_question_sample():
    plan = plan_sweep(
        {
            "tasks": "logic3",
            "configs": "0c3t,2c1t",
            "strengths": "moderate,strong",
            "k": "8,16",
            "max_tokens": 16,
            "n": 4,
            "m_star": 4,
        }
    )
    # 2c1t under both strengths and both K; 0c3t reads no injection: under the first strength
    # only (it would run the same uninjected agents twice)
    assert len(plan.conditions) == (2 + 1) * 2 and plan.n_units == 24
    uninjected = [c for c in plan.conditions if c.config.c == 0]
    assert {c.config.strength for c in uninjected} == {"moderate"} and len(uninjected) == 2
    assert {c.config.resolved_m for c in plan.conditions} == {4}
    qids = {tuple(q.qid for q in c.questions) for c in plan.conditions}
    assert len(qids) == 1  # MAJ and RRMaj and every config see the same questions


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"tasks": "logic9"}, "unknown task"),
        ({"tasks": "logic3", "n": 5000}, "has only"),
        ({"tasks": "logic3", "configs": "3c2x"}, "must look like 3c2t"),
        ({"tasks": "logic3", "configs": "0c0t"}, "no agents"),
        ({"tasks": "logic3", "configs": "3c3t", "n_agents": 5}, r"is 5; a label's c \+ t is its N"),
        ({"tasks": "logic3", "ensembles": [[]]}, "at least 1 agent"),
        ({"tasks": "logic3", "k": 64, "max_tokens": 32}, "at least K"),
        ({"tasks": "logic3", "strengths": "brutal"}, "unknown corruption strength"),
        ({"tasks": "logic3", "model": "smollm2"}, "unknown sweep setting"),
        ({"tasks": "logic3", "models": "nosuchmodel"}, "unknown model"),
        ({"tasks": "logic3", "ensembles": ["smollm2*,,smollm2"]}, "empty agent"),
        ({"tasks": "custom"}, "benchmark task"),
        ({"tasks": "logic3", "m_star": 0}, "at least 1"),
    ],
)
def test_bad_sweeps_are_refused_before_anything_runs(raw, message):
    with pytest.raises(RRError, match=message):
        plan_sweep(raw)


def test_cli_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "run.jsonl"
    code = cli_main(
        [
            "experiment",
            "--tasks",
            "logic3",
            "--configs",
            "6c2t",
            "--n-agents",
            "5",
            "--n",
            "999999",
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "error" in err
    assert not out.exists()


def test_cli_dry_run_lists_the_plan_from_a_sweep_file(tmp_path, capsys):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        "tasks: [gsm8k]\nconfigs: [1c2t]\nstrengths: [strong]\nk: [4, 8]\nmax_tokens: 8\nn: 2\n"
    )
    out = tmp_path / "run.jsonl"
    assert cli_main(["experiment", "--sweep", str(sweep), "--out", str(out), "--dry-run"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and all(
        line.startswith("gsm8k\tsmollm2\t1c2t\tstrong") for line in lines
    )
    assert not out.exists()


def test_cli_unreadable_sweep_file_is_a_clear_error(tmp_path, capsys):
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("tasks: [gsm8k\n")
    assert cli_main(["experiment", "--sweep", str(sweep), "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "is not valid YAML (line 2, column 1)" in capsys.readouterr().err


# -- one small real run -------------------------------------------------------------------------------
@pytest.mark.slow
def test_real_model_sweep_logs_and_resumes(tmp_path, real_pool):
    plan = plan_sweep(
        {
            "tasks": "logic3",
            "configs": "1c1t",
            "strengths": "strong",
            "k": 4,
            "max_tokens": 8,
            "n": 1,
            "m_star": 2,
            "temperature": 0.0,
        }
    )
    log = tmp_path / "real.jsonl"
    run_plan(plan, log, real_pool, progress=False)
    assert_exactly_once(log, plan)
    traj = [r for r in records(log) if r["type"] == "trajectory"]
    assert all(r["n_tokens"] <= 8 for r in traj)
    assert all(c["model"] == "smollm2" for r in traj for c in r["chunks"])
    assert run_plan(plan, log, real_pool, progress=False).units_run == 0


def test_module_entry_point_validates_and_exits_2_on_bad_input(tmp_path):
    out = tmp_path / "run.jsonl"
    base = [sys.executable, "-m", "rrdemo", "experiment", "--out", str(out), "--n", "2"]
    ok = subprocess.run(
        [*base, "--tasks", "logic3", "--configs", "1c1t", "--k", "4", "--max-tokens", "8",
         "--dry-run"],  # fmt: skip
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("logic3\tsmollm2\t1c1t\t")
    bad = subprocess.run(
        [*base, "--tasks", "nosuchtask"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [bad.stderr.strip()] and "unknown task" in bad.stderr
    assert not out.exists()
