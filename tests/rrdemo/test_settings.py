"""Run settings declared once (`rrdemo.settings`): the shared checks, the declarations read off
`RunConfig`, and every front end derived from them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from rrdemo.config import RunConfig, run_settings
from rrdemo.ensemble import ensemble_from_dict
from rrdemo.errors import RRError
from rrdemo.runs.spec import normalize_sweep
from rrdemo.seats import homogeneous_agents
from rrdemo.settings import check_choice, markdown_table, setting, whole_number

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("value", "number"), [(5, 5), (5.0, 5), ("5", 5), (" 7 ", 7), (0, 0)])
def test_whole_numbers_come_from_ints_ui_floats_and_text(value, number) -> None:
    assert whole_number(value, "K") == number


@pytest.mark.parametrize(
    ("value", "minimum", "message"),
    [
        (2.5, None, "K must be a whole number, got 2.5"),
        ("many", None, "K must be a whole number, got 'many'"),
        (True, None, "K must be a whole number, got True"),
        (None, None, "K must be a whole number, got None"),
        (float("inf"), None, "K must be a whole number"),
        (0, 1, "K must be at least 1, got 0"),
        ("-2", 0, "K must be at least 0, got -2"),
    ],
)
def test_anything_else_is_refused_with_what_was_given(value, minimum, message) -> None:
    with pytest.raises(RRError, match=re.escape(message)):
        whole_number(value, "K", minimum)


def test_a_choice_outside_its_words_is_refused_naming_them() -> None:
    check_choice("strong", "corruption strength", ("moderate", "strong"))
    with pytest.raises(
        RRError, match="unknown corruption strength 'loud'; allowed: moderate, strong"
    ):
        check_choice("loud", "corruption strength", ("moderate", "strong"))


def test_a_declaration_reads_type_words_and_default_off_its_field() -> None:
    found = {s.name: s for s in run_settings()}
    turn = found["turn_policy"]
    assert (turn.type, turn.default, turn.choices) == (
        str,
        "fixed",
        ("fixed", "sentence", "uncertainty"),
    )
    assert (turn.sweep, turn.many, turn.beyond) == ("many", "turn_policies", True)
    assert (found["k_min"].type, found["k_min"].optional) == (int, True)
    assert (found["meter"].type, found["meter"].default) == (bool, False)
    assert (found["k"].paper, found["k"].beyond) == (100, False)
    assert [s.name for s in run_settings()][-3:] == ["temperature", "top_p", "seed"]
    assert all(s.help and s.what for s in run_settings())


# One message per kind of mistake, whichever front end the value came from.
BAD = [
    ("meter", "false", "truth meter must be true or false, got 'false'"),
    ("meter", 1, "truth meter must be true or false, got 1"),
    ("eos_policy", "stop", "unknown end-of-sequence policy 'stop'; allowed: end, pass"),
    ("k_min", "two", "K_min must be a whole number, got 'two'"),
    ("k_min", 0, "K_min must be at least 1, got 0"),
    ("entropy_threshold", "high", "entropy threshold must be a number, got 'high'"),
    ("entropy_threshold", -1, "the entropy threshold must be a positive number of nats, got -1"),
    ("prompt_style", 3, "unknown prompt style 3; allowed: direct, step-by-step"),
]


@pytest.mark.parametrize(("name", "value", "message"), BAD)
def test_a_sweep_refuses_a_wrong_value_naming_what_is_allowed(name, value, message) -> None:
    with pytest.raises(RRError, match=re.escape(message)):
        normalize_sweep({name: value})


@pytest.mark.parametrize(("name", "value", "message"), BAD)
def test_an_ensemble_file_refuses_it_with_the_same_message(name, value, message) -> None:
    data = {"agents": [{"model": "smollm2"}], "run": {name: value}}
    with pytest.raises(RRError, match=re.escape(f"run: {message}")):
        ensemble_from_dict(data, "ens.yaml")


def test_an_ensemble_file_sets_the_settings_beyond_the_paper() -> None:
    run = {"eos_policy": "pass", "turn_policy": "sentence", "k_min": 2, "meter": True}
    config = ensemble_from_dict({"agents": [{"model": "smollm2"}], "run": run}, "ens.yaml").config
    assert (config.eos_policy, config.turn_policy, config.k_min, config.meter) == (
        "pass",
        "sentence",
        2,
        True,
    )


def test_a_setting_declared_outside_the_hash_leaves_the_hash_alone() -> None:
    @dataclass(frozen=True)
    class Noted(RunConfig):
        note: str = setting("", "note", "a remark kept with the config", hashed=False)

    agents = homogeneous_agents("smollm2", 3, 1)
    base = RunConfig(agents=agents, max_tokens=200)
    noted = Noted(agents=agents, max_tokens=200, note="first try")
    assert noted.to_dict()["note"] == "first try"
    assert noted.config_hash() == base.config_hash()
    assert base.config_hash() == RunConfig.from_dict(base.to_dict()).config_hash()


def test_the_docs_table_of_settings_is_the_declarations() -> None:
    """docs/architecture.md carries the generated table (its "How to add a setting" says how to
    regenerate it)."""
    docs = (ROOT / "docs" / "architecture.md").read_text()
    start, end = "<!-- settings table -->\n", "\n<!-- end of settings table -->"
    assert start in docs and end in docs
    table = docs.split(start, 1)[1].split(end, 1)[0]
    assert table == markdown_table(run_settings())
    assert "| `order` | shuffled | fixed |" in table  # ours beside the paper's


# The walk-through of docs/architecture.md ("How to add a setting"), followed in a fresh
# process: one field is declared on RunConfig, nothing else is edited, and every front end
# knows it. A fresh process, so that every module imports the extended RunConfig.
THROWAWAY = r"""
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import rrdemo.config as config
from rrdemo.settings import setting


@dataclass(frozen=True)
class WithTone(config.RunConfig):
    tone: Literal["plain", "loud"] = setting(
        "plain", "tone", "how loud the agents write", sweep="many", many="tones"
    )


config.RunConfig = WithTone

import gradio as gr

from rrdemo.cli import build_parser
from rrdemo.cli.experiment import served_models, sweep_from_args
from rrdemo.cli.run import _config
from rrdemo.ensemble import ensemble_from_dict
from rrdemo.errors import RRError
from rrdemo.runs.spec import normalize_sweep, plan_sweep
from rrdemo.settings import markdown_table
from ui.arena_controls import build_controls
from ui.replay import arena_request
from ui.state import ARENA_FIELDS, ArenaRequest, build_config

found = {}
args = build_parser().parse_args(["run", "--question", "q", "--tone", "loud"])
found["run"] = _config(args)[0].tone
argv = ["experiment", "--out", "x.jsonl", "--tones", "plain,loud", "--tasks", "demo"]
sweep = sweep_from_args(build_parser().parse_args(argv))
found["experiment"] = normalize_sweep(sweep)["tones"]
plan = plan_sweep({**sweep, "configs": ["1c1t"], "n": 1, "k": [8], "strengths": ["strong"]})
found["conditions"] = sorted(c.describe()["tone"] for c in plan.conditions)
try:
    normalize_sweep({"tones": ["quiet"]})
except RRError as exc:
    found["sweep refuses"] = str(exc)
ensemble = ensemble_from_dict({"agents": [{"model": "smollm2"}], "run": {"tone": "loud"}}, "f")
found["ensemble file"] = ensemble.config.tone
with tempfile.TemporaryDirectory() as folder:
    path = Path(folder, "f.yaml")
    path.write_text('{"run": {"tone": "loud"}, "agents": [{"model": "smollm2"}]}')
    raw = {"ensembles": [str(path)]}
    served_models(raw, {})
found["ensemble file's run"] = normalize_sweep(raw)["tones"]
with gr.Blocks():
    controls = build_controls(ArenaRequest())
control = controls.fields["tone"]
found["arena control"] = [type(control).__name__, control.value, control.label]
found["arena inputs"] = control in controls.inputs and "tone" in ARENA_FIELDS
found["arena run"] = build_config(ArenaRequest(tone="loud")).tone
found["docs"] = "| `tone` | plain | ours |" in markdown_table(config.run_settings())
print(json.dumps(found))
"""


def test_a_new_setting_reaches_every_front_end_from_its_declaration_alone() -> None:
    result = subprocess.run(
        [sys.executable, "-c", THROWAWAY], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found == {
        "run": "loud",
        "experiment": ["plain", "loud"],
        "conditions": ["loud", "plain"],
        "sweep refuses": "unknown tone 'quiet'; allowed: plain, loud",
        "ensemble file": "loud",
        "ensemble file's run": ["loud"],
        "arena control": ["Dropdown", "plain", "Tone"],
        "arena inputs": True,
        "arena run": "loud",
        "docs": True,
    }
