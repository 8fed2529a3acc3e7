"""`--corrupted-last` sweeps: one ensemble name for every c, so the main table keeps one row."""

from __future__ import annotations

import math

import pytest

from rrdemo.config import AgentSpec, homogeneous_agents
from rrdemo.report.tables import asymmetric_yield, main_table
from rrdemo.runs.log import read_run
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import ensemble_name, plan_sweep
from tests.support.fakes import FakeBackend, FakePool

CONFIGS = ["0c5t", "1c4t", "2c3t", "3c2t", "4c1t", "5c0t"]


@pytest.mark.parametrize("corrupted_first", [True, False])
def test_every_c_of_one_layout_has_one_name(corrupted_first: bool) -> None:
    names = {
        ensemble_name(homogeneous_agents("qwen", 5, c, corrupted_first), corrupted_first)
        for c in range(6)
    }
    assert names == {"qwen" if corrupted_first else "qwen [corrupted-last]"}


def test_layouts_stay_apart_and_mixed_seats_are_spelled_out() -> None:
    first = ensemble_name(homogeneous_agents("qwen", 5, 2, True))
    last = ensemble_name(homogeneous_agents("qwen", 5, 2, False))
    assert first == "qwen" and last == "qwen [corrupted-last]"
    middle = (AgentSpec("qwen"), AgentSpec("qwen", True), AgentSpec("qwen"))
    assert ensemble_name(middle) == "qwen,qwen*,qwen"
    mixed = (AgentSpec("smollm2", True), AgentSpec("gemma3-270m"))
    assert ensemble_name(mixed) == "smollm2*,gemma3-270m"


def _answers(prompt: str) -> str:
    """Honest agents answer (A); corrupted agents what they are told."""
    told = "MUST select (" in prompt
    return "The answer is (B)." if told else "The answer is (A)."


def test_corrupted_last_sweep_is_one_main_table_row_with_a_yield(tmp_path) -> None:
    plan = plan_sweep(
        {
            "tasks": ["logic3"],
            "models": ["smollm2"],
            "configs": CONFIGS,
            "corrupted_first": False,
            "strengths": ["strong"],
            "k": [8],
            "max_tokens": 16,
            "n": 2,
            "source": "offline",
        }
    )
    names = {c.describe()["ensemble"] for c in plan.conditions}
    assert names == {"smollm2 [corrupted-last]"}
    log = tmp_path / "run.jsonl"
    run_plan(plan, log, FakePool(FakeBackend("smollm2", _answers)), progress=False)
    rows = main_table(read_run(log).outcomes)
    assert len(rows) == 1
    row = rows[0]
    assert row.ceiling is not None and row.floor is not None
    assert [cell.label for cell in row.cells] == ["1c4t", "2c3t", "3c2t", "4c1t"]
    overall = [y for y in asymmetric_yield(rows) if y.task == "all"]
    assert len(overall) == 1
    assert not math.isnan(overall[0].safe_delta) and not math.isnan(overall[0].compromised_delta)
