"""The one limits table: every limit refuses a size one over it, at every door that takes that
size, before anything is built; the limits come from the environment when asked; the docs list
each one with its default and variable."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import pytest

from rrdemo.config import AgentSpec, RunConfig
from rrdemo.ensemble import ensemble_from_dict
from rrdemo.errors import RRError
from rrdemo.limits import ENV, Limits, limits
from rrdemo.runs.spec import plan_sweep
from rrdemo.seats import homogeneous_agents, parse_agents
from rrdemo.tasks.custom import custom_task

ROOT = Path(__file__).resolve().parents[2]
ONE = (AgentSpec("smollm2"),)


def _sweep(**changes) -> dict:
    base = {"tasks": "logic3", "configs": "0c1t", "strengths": "strong", "k": 4}
    return {**base, "max_tokens": 8, "n": 1, "source": "offline", **changes}


# Each limit: the value it is set to here, and every door that must refuse one more than it.
OVER: dict[str, tuple[int, list[Callable[[], object]]]] = {
    "agents": (
        4,
        [
            lambda: plan_sweep(_sweep(configs="3c2t")),
            lambda: plan_sweep(_sweep(configs=None, n_agents=5)),
            lambda: plan_sweep(_sweep(configs=None, ensembles=[[{"model": "smollm2"}] * 5])),
            lambda: plan_sweep(
                _sweep(configs=None, ensembles=["smollm2*, " + "gemma3-270m, " * 4])
            ),
            lambda: homogeneous_agents("smollm2", 5, 1),
            lambda: parse_agents("m1\nm2\nm3\nm4\nm5"),
            lambda: ensemble_from_dict({"agents": [{"model": "smollm2", "count": 5}]}),
            lambda: RunConfig(agents=ONE * 5),
        ],
    ),
    "trajectories": (
        4,
        [lambda: plan_sweep(_sweep(m_star=5)), lambda: RunConfig(agents=ONE, m=5)],
    ),
    "tokens": (
        64,
        [
            lambda: plan_sweep(_sweep(max_tokens=65)),
            lambda: plan_sweep(_sweep(k="4,65")),
            lambda: RunConfig(agents=ONE, k=4, max_tokens=65),
        ],
    ),
    "questions": (3, [lambda: plan_sweep(_sweep(n=4))]),
    "configs": (
        2,
        [
            lambda: plan_sweep(_sweep(configs="0c1t,1c0t,1c1t")),
            lambda: plan_sweep(_sweep(ensembles=["smollm2", "smollm2*"])),
        ],
    ),
    "sweep_values": (
        2,
        [
            lambda: plan_sweep(_sweep(tasks="logic3,gsm8k,aqua")),
            lambda: plan_sweep(_sweep(models="smollm2,smollm2,smollm2")),
            lambda: plan_sweep(_sweep(strengths="moderate,strong,none")),
            lambda: plan_sweep(_sweep(k="4,5,6")),
            lambda: plan_sweep(_sweep(adversaries="static,contextual,last-word")),
            lambda: plan_sweep(_sweep(turn_policies="fixed,sentence,uncertainty")),
        ],
    ),
    "conditions": (3, [lambda: plan_sweep(_sweep(configs="0c1t,1c0t", k="4,5"))]),
    "units": (3, [lambda: plan_sweep(_sweep(configs="0c1t,1c0t", n=2))]),
    "web_units": (
        3,
        [lambda: plan_sweep(_sweep(configs="0c1t,1c0t", n=2), units_limit="web_units")],
    ),
    "question_chars": (
        12,
        [
            lambda: custom_task().question("What is 2+2?!"),
            lambda: custom_task().question("What is 2+2?", gold="4" + " " * 12),
        ],
    ),
    "template_chars": (
        12,
        [lambda: RunConfig(agents=ONE, strength="custom", custom_template="Say {target}!!")],
    ),
}


def test_every_limit_has_its_row_here() -> None:
    assert set(OVER) == {f.name for f in fields(Limits)} == set(ENV)


@pytest.mark.parametrize(
    ("name", "door"),
    [(name, door) for name, (_, doors) in OVER.items() for door in doors],
    ids=[f"{name}-{i}" for name, (_, doors) in OVER.items() for i in range(len(doors))],
)
def test_one_over_a_limit_is_refused_naming_the_limit_and_its_variable(
    name: str, door: Callable[[], object], monkeypatch: pytest.MonkeyPatch
) -> None:
    limit = OVER[name][0]
    monkeypatch.setenv(ENV[name], str(limit))
    with pytest.raises(RRError) as refused:
        door()
    assert f"at most {limit} is allowed ({ENV[name]})" in str(refused.value)


def test_at_the_limits_the_same_doors_let_a_run_through(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, (limit, _) in OVER.items():
        monkeypatch.setenv(ENV[name], str(limit))
    sweep = _sweep(models="smollm2,gemma3-270m", configs="3c1t", ensembles=["smollm2*"])
    plan = plan_sweep({**sweep, "m_star": 4, "max_tokens": 64}, units_limit="web_units")
    assert len(plan.conditions) == plan.n_units == 3  # 2 models x 1 label + 1 ensemble
    assert len(parse_agents("m1\nm2\nm3\nm4")) == 4
    four = {"agents": [{"model": "smollm2", "count": 4}], "run": {"k": 4, "max_tokens": 64}}
    assert ensemble_from_dict(four).config.n == 4
    assert RunConfig(agents=ONE * 4, m=4, k=4, max_tokens=64).n == 4
    assert custom_task().question("What is 2+2?").text == "What is 2+2?"


def test_limits_are_read_when_asked_and_a_bad_variable_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert limits() == Limits()
    monkeypatch.setenv("RRDEMO_MAX_AGENTS", "500")
    assert limits().agents == 500 and RunConfig(agents=ONE * 100).n == 100
    for bad in ("lots", "0", "-3", "1.5"):
        monkeypatch.setenv("RRDEMO_MAX_AGENTS", bad)
        with pytest.raises(
            RRError,
            match=f"RRDEMO_MAX_AGENTS must be a whole number of at least 1, got '{re.escape(bad)}'",
        ):
            limits()


def test_the_security_page_lists_every_limit_with_its_default_and_variable() -> None:
    text = (ROOT / "docs" / "security.md").read_text()
    section = text.split("## Limits", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        variable = re.fullmatch(r"`(RRDEMO_MAX_\w+)`", cells[-1]) if len(cells) >= 3 else None
        if variable:
            rows[variable.group(1)] = int(cells[-2].replace(",", "").replace(" ", ""))
    assert rows == {ENV[f.name]: f.default for f in fields(Limits)}
