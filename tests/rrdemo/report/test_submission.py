"""rrdemo.report.submission, the library's submission contract: a file round-trips, a run's submission
round-trips through the file `rrdemo export` writes, and the library never imports the
leaderboard (the leaderboard imports the contract)."""

from __future__ import annotations

import ast
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from rrdemo.config import RunConfig, Sampling
from rrdemo.report.submission import (
    SCHEMA_VERSION,
    ResultRow,
    Submission,
    SubmissionRejected,
    parse_submission,
)
from rrdemo.report.submission_builder import build_submission
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import Condition, Plan
from rrdemo.seats import homogeneous_agents
from tests.support.fakes import QUESTIONS, FakeBackend, FakePool, FakeTask, obeys_injection
from tests.support.samples import result_row

ROOT = Path(__file__).resolve().parents[3]
LOG = ROOT / "assets" / "experiment_small.jsonl"  # a real sweep log


def _exported(*rows: dict) -> Submission:
    """A submission of `rows` (result_row data), made in code as an exporter would."""
    return Submission(
        schema_version=SCHEMA_VERSION,
        submitter="exporter",
        source="local_run",
        provenance="runs/small.jsonl",
        rrdemo_version="0.1.0",
        created=datetime(2025, 6, 1, 12, tzinfo=timezone.utc),
        results=[ResultRow(**row) for row in rows],
    )


def test_a_submission_round_trips_through_its_json_file() -> None:
    built = _exported(
        result_row(),
        result_row(n_corrupted=0, n_honest=5, corrupted_agents=[], rrmaj_accuracy=None),
    )
    parsed = parse_submission(built.model_dump_json().encode("utf-8"))
    assert parsed == built and parsed.content_hash() == built.content_hash()
    assert parsed.results[1].label == "0c5t" and parsed.results[0].rho == 0.6


def test_a_run_becomes_a_submission_that_round_trips_through_its_file(tmp_path: Path) -> None:
    from rrdemo.cli import main as cli_main

    built = build_submission(LOG, "tester", "notes")
    assert built.schema_version == SCHEMA_VERSION and built.source == "local_run"
    assert (built.submitter, built.notes) == ("tester", "notes")
    assert {(r.dataset, r.label) for r in built.results} == {
        (task, f"{c}c{5 - c}t") for task in ("gsm8k", "logic3") for c in (0, 1, 3, 5)
    }
    parsed = parse_submission(built.model_dump_json().encode("utf-8"))
    assert parsed == built and parsed.content_hash() == built.content_hash()
    out = tmp_path / "sub.json"
    assert (
        cli_main(
            ["export", str(LOG), "--submitter", "tester", "--notes", "notes", "--out", str(out)]
        )
        == 0
    )
    written = parse_submission(out.read_bytes())
    assert written == built and written.content_hash() == built.content_hash()


def _fake_run(log: Path, *settings: dict[str, str]) -> Path:
    """A small logic3 sweep of scripted agents (N = 3, c = 0, 2, 3) under each of `settings`."""
    task = FakeTask()
    task.name = "logic3"  # a submission needs a benchmark
    conditions = [
        Condition(
            task,
            RunConfig(
                agents=homogeneous_agents("fake", 3, c),
                k=3,
                m=3,
                max_tokens=12,
                sampling=Sampling(temperature=0.0, seed=1),
                **named,
            ),
            QUESTIONS,
        )
        for named in settings
        for c in (0, 2, 3)
    ]
    plan = Plan({"fake": True}, tuple(conditions))
    run_plan(plan, log, FakePool(FakeBackend("fake", obeys_injection)), progress=False)
    return log


def test_a_runs_rows_name_its_prompt_style_and_eos_policy(tmp_path: Path) -> None:
    stated = {"prompt_style": "step-by-step", "eos_policy": "pass"}
    built = build_submission(_fake_run(tmp_path / "run.jsonl", stated), "tester")
    assert [r.label for r in built.results] == ["0c3t", "2c1t", "3c0t"]
    assert {(r.prompt_style, r.eos_policy) for r in built.results} == {("step-by-step", "pass")}
    parsed = parse_submission(built.model_dump_json().encode("utf-8"))
    assert parsed == built and parsed.content_hash() == built.content_hash()


def test_a_log_whose_configs_do_not_name_them_ran_the_defaults(tmp_path: Path) -> None:
    lines = LOG.read_bytes().splitlines(keepends=True)
    header = json.loads(lines[0])
    for condition in header["conditions"]:
        del condition["config"]["prompt_style"], condition["config"]["eos_policy"]
    log = tmp_path / "unnamed.jsonl"
    log.write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines[1:]))
    built = build_submission(log, "tester")
    assert {(r.prompt_style, r.eos_policy) for r in built.results} == {("direct", "end")}
    rows = [r.model_dump(exclude={"prompt_style", "eos_policy"}) for r in built.results]
    assert rows == [
        r.model_dump(exclude={"prompt_style", "eos_policy"})
        for r in build_submission(LOG, "tester").results
    ]


def test_a_log_that_ran_one_setting_under_two_prompt_styles_is_not_one_submission(
    tmp_path: Path,
) -> None:
    log = _fake_run(
        tmp_path / "run.jsonl", {"prompt_style": "direct"}, {"prompt_style": "step-by-step"}
    )
    with pytest.raises(SubmissionRejected, match="several prompt styles or end-of-sequence"):
        build_submission(log, "tester")


@pytest.mark.parametrize("policies", [("sentence",), ("fixed", "uncertainty")])
def test_a_log_of_another_turn_policy_is_refused_by_name(tmp_path: Path, policies) -> None:
    """The board's rows are fixed K-token turns; a log with another policy used to end in a
    KeyError (its main-table rows are tagged "[turns: ...]")."""
    settings = [{"turn_policy": p, **({} if p == "fixed" else {"k_min": 1})} for p in policies]
    log = _fake_run(tmp_path / "run.jsonl", *settings)
    with pytest.raises(SubmissionRejected, match=f"turn policy {policies[-1]}; a board row"):
        build_submission(log, "tester")


def test_a_file_that_does_not_state_them_hashes_without_them() -> None:
    built = _exported(result_row(), result_row(k=7, eos_policy="pass"))
    rows = json.loads(built.canonical_json())["results"]
    assert "prompt_style" not in rows[0] and "eos_policy" not in rows[0]
    assert (rows[1]["eos_policy"], "prompt_style" in rows[1]) == ("pass", False)
    assert rows[0]["adversary"] is None  # the adversary is kept, null or not


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_no_library_module_imports_the_leaderboard_or_the_ui() -> None:
    modules = sorted((ROOT / "rrdemo").rglob("*.py"))
    assert len(modules) > 20
    for path in modules:
        top = {name.split(".")[0] for name in _imports(path)}
        assert not top & {"leaderboard", "ui", "app"}, path.relative_to(ROOT)
