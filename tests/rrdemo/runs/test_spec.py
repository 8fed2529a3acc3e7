"""The sweep's plan: `--corrupted-last` sweeps keep one ensemble name for every c (so the main
table keeps one row); explicit ensembles' seats, labels and files are checked before anything."""

from __future__ import annotations

import math

import pytest

from rrdemo.config import AgentSpec
from rrdemo.ensemble import ensemble_from_dict, load_ensemble
from rrdemo.errors import RRError
from rrdemo.report.tables import asymmetric_yield, main_table
from rrdemo.runs.log import read_run
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import ensemble_name, normalize_sweep, plan_sweep
from rrdemo.runs.sweep import load_sweep_file
from rrdemo.seats import homogeneous_agents
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


def _calibration(tmp_path, n: int = 20):
    """A calibration log (header only: its split is what the sweep reads)."""
    from rrdemo.calibration.log import header_for
    from rrdemo.calibration.plan import plan_calibration
    from rrdemo.jsonl import dump_record

    plan = plan_calibration({"models": "smollm2", "tasks": "logic3", "n": n, "split_seed": 3})
    path = tmp_path / "cal.jsonl"
    path.write_bytes(dump_record(header_for(plan)))
    return path, {q.qid for q in plan.split["logic3"]}


def test_a_named_calibrations_questions_are_held_out_of_the_sweep(tmp_path) -> None:
    path, used = _calibration(tmp_path)
    raw = {"tasks": "logic3", "configs": "3c2t", "n": 200, "seed": 0}
    plain = {q.qid for q in plan_sweep(raw).conditions[0].questions}
    assert plain & used  # drawn from the whole set, 200 of 250 share some with the split
    held = plan_sweep({**raw, "calibration": str(path)})
    qids = {q.qid for q in held.conditions[0].questions}
    assert len(qids) == 200 and not qids & used
    assert held.sweep["calibration"] == [str(path)]
    assert "calibration" not in plan_sweep(raw).sweep  # a sweep without one reads as before
    with pytest.raises(RRError, match="only 230 remain once the calibration's 20 are set aside"):
        plan_sweep({**raw, "n": 231, "calibration": str(path)})


def test_overlap_with_a_calibration_is_refused_naming_the_questions() -> None:
    from rrdemo.runs.spec import check_held_out

    check_held_out({"logic3": {"logic3-0001"}}, {"logic3": {"logic3-0002"}})
    with pytest.raises(
        RRError, match=r"1 question\(s\) were used by the named calibration \(logic3: logic3-0002\)"
    ):
        check_held_out({"logic3": {"logic3-0001", "logic3-0002"}}, {"logic3": {"logic3-0002"}})


def test_experiment_refuses_a_log_that_holds_calibration_questions(tmp_path, capsys) -> None:
    """A log begun without the calibration, then continued naming it: exit 2, the log untouched."""
    from rrdemo.cli import main
    from rrdemo.jsonl import dump_record
    from rrdemo.runs.write import header_for

    path, _ = _calibration(tmp_path)
    out = tmp_path / "evidence.jsonl"
    sweep = {"tasks": "logic3", "models": "smollm2", "configs": "1c1t", "strengths": "strong"}
    sweep |= {"k": 2, "max_tokens": 4, "n": 200, "backend": "auto"}
    out.write_bytes(dump_record(header_for(plan_sweep(sweep))))
    before = out.read_bytes()
    argv = ["experiment", "--tasks", "logic3", "--model", "smollm2", "--configs", "1c1t"]
    argv += ["--strengths", "strong", "--k", "2", "--max-tokens", "4", "--n", "200"]
    assert main([*argv, "--calibration", str(path), "--out", str(out)]) == 2
    assert "were used by the named calibration (logic3: " in capsys.readouterr().err
    assert out.read_bytes() == before


# -- explicit ensembles: each seat checked as an ensemble file's agent is ---------------------------
@pytest.mark.parametrize(
    ("seat", "says"),
    [
        ({"model": "smollm2", "korrupt": True}, "unknown setting(s) korrupt; allowed: "),
        (
            {"model": "smollm2", "corrupted": "false"},
            "corrupted must be true or false, got 'false'",
        ),
        ({"model": "smollm2", "corrupted": 1}, "corrupted must be true or false, got 1"),
    ],
)
def test_a_bad_seat_is_refused_as_an_ensemble_file_refuses_it(seat: dict, says: str) -> None:
    with pytest.raises(RRError) as in_sweep:
        normalize_sweep({"tasks": "logic3", "ensembles": [[{"model": "gemma3-270m"}, seat]]})
    with pytest.raises(RRError) as in_file:
        ensemble_from_dict({"agents": [{"model": "gemma3-270m"}, seat]}, source="e.yaml")
    assert str(in_sweep.value).startswith(f"ensemble #1: agent #2: {says}")
    assert str(in_file.value).startswith(f"e.yaml: agent #2: {says}")
    if "allowed" in says:  # each names its own allowed set
        assert str(in_sweep.value).endswith("allowed: model, corrupted")


def test_a_sweep_file_with_a_misspelt_or_quoted_flag_plans_nothing(tmp_path) -> None:
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("tasks: [logic3]\nensembles:\n  - [{model: smollm2, korrupt: true}]\n")
    with pytest.raises(RRError, match=r"unknown setting\(s\) korrupt"):
        plan_sweep(load_sweep_file(sweep))
    with pytest.raises(RRError, match="corrupted_first must be true or false, got 'false'"):
        normalize_sweep({"tasks": "logic3", "corrupted_first": "false"})


def test_a_label_defines_n_and_an_explicit_n_that_disagrees_is_named() -> None:
    assert normalize_sweep({"tasks": "logic3", "configs": "7c2t"})["configs"] == ["7c2t"]
    with pytest.raises(RRError) as refused:
        normalize_sweep({"tasks": "logic3", "configs": "7c2t", "n_agents": 5})
    assert str(refused.value) == (
        "config '7c2t' has N = c + t = 9 agents, but n_agents (--n-agents) is 5; a label's "
        "c + t is its N, so leave n_agents out or make them agree"
    )


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("sweep.yaml", "tasks: [logic3]\nk: [4\nn: 2\n", "(line 3, column 2)"),
        ("sweep.json", '{"tasks": ["logic3"],\n "n": }', "(line 2, column 7)"),
    ],
)
def test_a_settings_file_that_does_not_parse_names_its_line(tmp_path, name, text, where) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(RRError) as refused:
        load_sweep_file(path)
    assert where in str(refused.value) and name in str(refused.value)
    ensemble = tmp_path / ("ensemble" + path.suffix)
    ensemble.write_text(text)
    with pytest.raises(RRError) as refused:
        load_ensemble(ensemble)
    assert where in str(refused.value)


def test_a_dtype_is_part_of_each_local_agents_config_only_when_given() -> None:
    raw = {"tasks": "logic3", "configs": "1c2t", "strengths": "strong", "n": 1, "backend": "auto"}
    plain = plan_sweep(raw)
    assert "dtype" not in plain.sweep  # a sweep without one reads (and resumes) as before
    assert "dtype" not in plain.conditions[0].config.to_dict()["agents"][0]
    half = plan_sweep({**raw, "dtype": "bfloat16"})
    agents = half.conditions[0].config.agents
    assert {(a.dtype, a.backend) for a in agents} == {("bfloat16", "transformers")}
    assert half.conditions[0].key != plain.conditions[0].key  # it changes the text: hashed
    with pytest.raises(RRError, match="unknown dtype 'fp8'; allowed: float32, bfloat16"):
        plan_sweep({**raw, "dtype": "fp8"})
