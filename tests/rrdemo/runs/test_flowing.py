"""Units in a flow (`run_plan(..., workers=W)` on llama.cpp): threads take units off one queue and
their model calls share every decoding step; each unit writes what it writes alone."""

from __future__ import annotations

import json

import pytest

from rrdemo.errors import RRError
from rrdemo.runs.runner import all_llamacpp, run_plan
from rrdemo.runs.spec import plan_sweep
from tests.rrdemo.runs.test_gang import _content
from tests.rrdemo.runs.test_runner import assert_exactly_once
from tests.support.fakes import fake_plan, fake_pool
from tests.support.llama import needs_llama


def test_a_flow_needs_every_agent_on_llamacpp(tmp_path):
    assert all_llamacpp(_llama_plan()) and not all_llamacpp(fake_plan())
    with pytest.raises(RRError, match="llama.cpp"):
        run_plan(fake_plan(), tmp_path / "x.jsonl", fake_pool(), workers=2, flow=True)


def test_units_in_a_flow_write_what_they_write_alone(tmp_path, monkeypatch):
    monkeypatch.setattr("rrdemo.runs.runner.all_llamacpp", lambda plan: True)  # scripted agents
    plan = fake_plan(labels=("0c3t", "2c1t", "1c2t"))
    alone, flowing = tmp_path / "alone.jsonl", tmp_path / "flowing.jsonl"
    run_plan(plan, alone, fake_pool(), progress=False)
    summary = run_plan(plan, flowing, fake_pool(), progress=False, workers=3, flow=True)
    assert summary.units_run == plan.n_units
    assert_exactly_once(flowing, plan)
    assert _content(flowing) == _content(alone)


def test_a_killed_flow_resumes_with_only_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr("rrdemo.runs.runner.all_llamacpp", lambda plan: True)
    plan = fake_plan()
    log = tmp_path / "run.jsonl"
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_plan(plan, log, fake_pool(fail_after=40), progress=False, workers=3, flow=True)
    lines = log.read_text().splitlines()
    done_before = sum(json.loads(line)["type"] == "done" for line in lines)
    assert 0 < done_before < plan.n_units
    summary = run_plan(plan, log, fake_pool(), progress=False, workers=3, flow=True)
    assert summary.units_skipped == done_before
    assert_exactly_once(log, plan)


def _llama_plan():
    return plan_sweep(
        {
            "tasks": "logic3",
            "configs": "1c1t,0c2t",
            "strengths": "strong",
            "k": 4,
            "max_tokens": 12,
            "n": 3,
            "m_star": 2,
            "temperature": 0.7,
            "backend": "llamacpp",
        }
    )


@needs_llama
@pytest.mark.slow
def test_real_llamacpp_units_in_a_flow_write_what_they_write_alone(tmp_path, real_pool):
    plan = _llama_plan()
    alone, flowing = tmp_path / "alone.jsonl", tmp_path / "flowing.jsonl"
    run_plan(plan, alone, real_pool, progress=False)
    summary = run_plan(plan, flowing, real_pool, progress=False, workers=3, flow=True)
    assert summary.units_run == plan.n_units == 6
    assert_exactly_once(flowing, plan)
    assert _content(flowing) == _content(alone)
