"""This project's own board rows against the rest of the project: one number per (run, config,
method) on the board, in the report's paired table and in the Arena's result line, with the
estimator named; each row says what it stands on; the old-prompt sweep is superseded, never
ranked; `python -m leaderboard` keeps to the checkout's data folder."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from leaderboard import cli, db, service
from leaderboard.db import run_transaction
from leaderboard.ranking import independent, rank_models
from rrdemo.errors import RRError
from rrdemo.gallery import cached_log, load_gallery
from rrdemo.report.render import pct
from rrdemo.report.submission import Submission, parse_submission
from rrdemo.study.file import load_study
from ui import arena_chooser

ROOT = Path(__file__).resolve().parents[2]
PROJECT_RUNS = ROOT / "leaderboard" / "project_runs"
OLD_PROMPT = "qwen15b"  # the sweep docs/evidence.md calls the old prompt's


def _seeded() -> dict[str, Submission]:
    return {
        path.parent.name: parse_submission(path.read_bytes(), allow_reserved=True)
        for path in sorted(PROJECT_RUNS.glob("*/submission.json"))
    }


def _paired(submission: Submission) -> dict[tuple[str, str, str], dict[str, str]]:
    """The report's paired table (the run's decisions) of the study that made `submission`; for
    a run that varies another (RRMaj alone under `pass`), its RRMaj against that run's MAJ."""
    study = load_study(ROOT / submission.provenance)
    name = "policies.csv" if study.paired_with else "paired.csv"
    with (study.report / name).open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if study.paired_with:
        rows = [{**r, "rrmaj": r["rrmaj_other"]} for r in rows]
    return {(r["task"], r["label"], r["strength"]): r for r in rows}


def test_every_seeded_row_names_its_estimator_questions_and_study() -> None:
    for name, submission in _seeded().items():
        study = load_study(ROOT / submission.provenance)  # a study file of this checkout
        assert study.board is not None and study.board.out.resolve() == (
            PROJECT_RUNS / name / "submission.json"
        )
        assert {row.estimator for row in submission.results} == {"decisions"}
        assert all(row.n_questions >= 1 for row in submission.results)


@pytest.mark.parametrize("name", sorted(_seeded()))
def test_a_seeded_row_is_its_reports_paired_number(name: str) -> None:
    submission = _seeded()[name]
    paired = _paired(submission)
    for row in submission.results:
        decided = paired[(row.dataset, row.label, row.strength)]
        assert row.n_questions == int(decided["questions"])
        assert row.maj_accuracy == pytest.approx(float(decided["maj"]), abs=1e-6)
        assert row.rrmaj_accuracy == pytest.approx(float(decided["rrmaj"]), abs=1e-6)


def test_the_arenas_result_line_shows_the_boards_number_and_names_the_estimator() -> None:
    gallery = load_gallery(ROOT / "assets" / "gallery.json")
    rows = {  # (the study's log, task, config, strength) -> the board row
        (load_study(ROOT / submission.provenance).log.resolve(), r.dataset, r.label, r.strength): r
        for name, submission in _seeded().items()
        if name != OLD_PROMPT
        for r in submission.results
    }
    checked = 0
    for index, setting in enumerate(gallery.settings):
        if setting.shelf or setting.outcome() is None:
            continue
        condition = cached_log(setting.log).conditions[setting.condition]
        key = (condition["task"], condition["label"], condition["strength"])
        row = rows.get((setting.log.resolve(), *key))
        if row is None:
            continue
        unit = setting.unit(setting.questions[0])
        line = arena_chooser.result_for(gallery, unit, index)
        assert "estimator: run's decisions" in line
        assert f"{row.n_questions} questions" in line
        assert f"MAJ {pct(row.maj_accuracy)}% · RRMaj {pct(row.rrmaj_accuracy)}%" in line
        checked += 1
    assert checked >= 5  # every evidence run's 3c2t: AQuA, arith2 (end and pass), rule 3's two
    aqua = _seeded()["evidence_aqua"].results
    (aqua,) = [r for r in aqua if r.label == "3c2t"]
    assert pct(aqua.rrmaj_accuracy) == "8.8" and pct(aqua.maj_accuracy) == "2.5"


def test_the_old_prompt_sweep_is_superseded_and_no_ranking_reads_it(
    lb_env: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = _seeded()[OLD_PROMPT]
    assert all(row.superseded and "old prompt" in row.superseded for row in old.results)
    monkeypatch.setenv(service.PROJECT_RUNS_ENV, str(PROJECT_RUNS))
    factory = service.open_leaderboard(lb_env)
    rows = run_transaction(factory, service.board_rows)
    ours = [r for r in rows if r.source == "rrdemo"]
    assert {r.standing for r in ours if r.superseded} == {
        f"superseded: {old.results[0].superseded}"
    }
    current = [r for r in ours if not r.superseded]
    assert current and all(r.ranked for r in current)
    scores = [s for s in rank_models(rows) if s.model == old.results[0].model]
    counted = {s.tasks: s.n_majority_rows + s.n_minority_rows for s in scores}
    # only the evidence runs' rows, none of the old sweep's, each question counted once (a row
    # that may share its questions with a larger one is left out: `ranking.independent`)
    kept, _ = independent([r for r in current if r.model == old.results[0].model])
    assert counted == {
        "the paper's tasks": sum(r.band != "bound" for r in kept if not r.beyond_the_paper),
        "generated, beyond the paper": sum(r.band != "bound" for r in kept if r.beyond_the_paper),
    }
    factory.kw["bind"].dispose()


def test_list_json_gives_each_row_its_estimator_questions_and_provenance(
    lb_env: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv(service.PROJECT_RUNS_ENV, str(PROJECT_RUNS))
    assert cli.main(["list", "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed and all(
        r["estimator"] in ("decisions", "pool-draws") and r["n_questions"] >= 1 and r["provenance"]
        for r in listed
    )
    ours = [r for r in listed if r["source"] == "rrdemo"]
    assert {r["provenance"] for r in ours} == {
        "assets/evidence/study.yaml",
        "assets/evidence_aqua/study.yaml",
        "assets/evidence_arith4_steps/study.yaml",
        "assets/evidence_logic3_steps/study.yaml",
        "assets/evidence_pass/study.yaml",
    }  # the old-prompt sweep is superseded: left out by default
    assert {r["estimator"] for r in listed if r["source"] == "paper"} == {"pool-draws"}
    assert cli.main(["list", "--format", "json", "--superseded", "--source", "rrdemo"]) == 0
    every = json.loads(capsys.readouterr().out)
    old = [r for r in every if r["provenance"] == "assets/qwen15b/study.yaml"]
    assert old and all(r["standing"].startswith("superseded: old prompt") for r in old)


def test_the_cli_keeps_to_the_checkouts_data_folder_or_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    for name in ("LEADERBOARD_DB_URL", "RRDEMO_DATA_DIR", "SPACE_ID"):
        monkeypatch.delenv(name, raising=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    checkout = tmp_path / "checkout"
    monkeypatch.setattr(db, "project_checkout", lambda: checkout)
    assert db.command_line_url() == f"sqlite:///{checkout / 'data' / 'leaderboard.db'}"
    assert cli.main(["list", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)
    assert (checkout / "data" / "leaderboard.db").is_file()
    assert list(elsewhere.iterdir()) == []  # nothing made where the command ran
    monkeypatch.setattr(db, "project_checkout", lambda: None)  # an installed copy
    with pytest.raises(RRError, match="No leaderboard database is chosen"):
        db.command_line_url()
    assert cli.main(["list"]) == 2
    assert "set LEADERBOARD_DB_URL" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []
