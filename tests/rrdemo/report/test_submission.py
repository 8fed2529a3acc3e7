"""rrdemo.report.submission, the library's submission contract: a file round-trips, a run's submission
round-trips through the file `rrdemo export` writes, and the library never imports the
leaderboard (the leaderboard imports the contract)."""

from __future__ import annotations

import ast
from datetime import datetime, timezone
from pathlib import Path

from rrdemo.report.submission import (
    SCHEMA_VERSION,
    ResultRow,
    Submission,
    build_submission,
    parse_submission,
)
from tests.support.samples import result_row

ROOT = Path(__file__).resolve().parents[3]
LOG = ROOT / "assets" / "experiment_small.jsonl"  # a real sweep log


def test_a_submission_round_trips_through_its_json_file() -> None:
    built = Submission(
        schema_version=SCHEMA_VERSION,
        submitter="exporter",
        source="local_run",
        rrdemo_version="0.1.0",
        created=datetime(2025, 6, 1, 12, tzinfo=timezone.utc),
        results=[
            ResultRow(**result_row()),
            ResultRow(
                **result_row(n_corrupted=0, n_honest=5, corrupted_agents=[], rrmaj_accuracy=None)
            ),
        ],
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
