"""The gallery of recorded runs: the manifest is read and checked, its rule picks the first
finished questions of a condition, and the shipped gallery follows that rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rrdemo.errors import RRError
from rrdemo.gallery import cached_log, first_questions, load_gallery, manifest_path
from rrdemo.replay import finished_units
from rrdemo.runs.log import read_log
from tests.support.fakes import fake_run


@pytest.fixture
def run_log(tmp_path) -> Path:
    """A scripted sweep of two conditions, three questions each."""
    return fake_run(tmp_path / "runs" / "run.jsonl")


def _manifest(folder: Path, settings: list[dict], logs=None) -> Path:
    path = folder / "gallery.json"
    logs = {"run.jsonl": {"recorded": "2026-01-02"}} if logs is None else logs
    path.write_text(json.dumps({"rule": "the first 2", "logs": logs, "settings": settings}))
    return path


def test_the_first_questions_are_the_conditions_finished_units_in_the_sweeps_order(run_log):
    log = read_log(run_log)
    units = finished_units(log)
    for key in log.conditions:
        mine = [q for k, q in units if k == key]
        assert len(mine) == 3 and mine == log.conditions[key]["questions"]
        assert first_questions(log, key, 2) == mine[:2]
        assert first_questions(log, key, 10) == mine


def test_merging_shards_in_any_order_keeps_the_first_questions(run_log, tmp_path):
    """Shard logs joined the other way round put the lines in another order; the gallery's
    questions follow the sweep's order, so they stay the same."""
    from rrdemo.jsonl import dump_record
    from rrdemo.runs.write import merge_logs

    log = read_log(run_log)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, part in ((first, 0), (second, 1)):
        lines = [dump_record(log.header)]
        for index, (done, trajectories) in enumerate(log.units()):
            if (index // len(log.conditions)) % 2 == part:  # by question
                lines += [dump_record(r) for r in (*trajectories, done)]
        path.write_bytes(b"".join(lines))
    merged = tmp_path / "merged.jsonl"
    merge_logs([second, first], merged)
    joined = read_log(merged)
    assert finished_units(joined) != finished_units(log)
    for key in log.conditions:
        assert first_questions(joined, key, 2) == first_questions(log, key, 2)


def test_a_manifest_names_each_settings_log_condition_and_questions(run_log):
    log = read_log(run_log)
    key = next(iter(log.conditions))
    questions = first_questions(log, key, 2)
    setting = {"name": "s", "description": "d", "log": "run.jsonl", "condition": key}
    path = _manifest(run_log.parent, [{**setting, "questions": questions}])
    gallery = load_gallery(path)
    (loaded,) = gallery.settings
    assert (loaded.log, loaded.source, loaded.recorded) == (run_log, "runs/run.jsonl", "2026-01-02")
    assert gallery.rule == "the first 2" and gallery.entries() == [(0, q) for q in questions]
    unit = loaded.unit(questions[1])
    assert (unit.done["condition"], unit.done["question_id"]) == (key, questions[1])


def test_the_manifest_comes_from_the_environment_when_set(run_log, monkeypatch):
    key = next(iter(read_log(run_log).conditions))
    setting = {"name": "s", "description": "d", "log": "run.jsonl", "condition": key}
    path = _manifest(run_log.parent, [{**setting, "questions": ["fake-0"]}])
    monkeypatch.setenv("RRDEMO_GALLERY", str(path))
    assert manifest_path() == path and load_gallery().settings[0].condition == key
    monkeypatch.delenv("RRDEMO_GALLERY")
    assert manifest_path().name == "gallery.json" and manifest_path().parent.name == "assets"


def test_a_broken_manifest_says_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(RRError, match="gallery setting 1 in gallery.json lacks description"):
        load_gallery(_manifest(tmp_path, [{"name": "x"}]))
    full = {
        "name": "s",
        "description": "d",
        "log": "other.jsonl",
        "condition": "c",
        "questions": ["q"],
    }
    with pytest.raises(RRError, match="lacks an entry under logs for 'other.jsonl'"):
        load_gallery(_manifest(tmp_path, [full]))
    with pytest.raises(RRError, match="lists no settings"):
        load_gallery(_manifest(tmp_path, []))
    with pytest.raises(RRError, match="cannot be read"):
        load_gallery(tmp_path / "missing.json")


def test_a_log_is_parsed_again_only_when_it_changed(run_log, tmp_path):
    lines = run_log.read_text().splitlines(keepends=True)
    first_done = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "done")
    path = tmp_path / "growing.jsonl"
    path.write_text("".join(lines[: first_done + 1]))  # a sweep one unit in
    first = cached_log(path)
    assert cached_log(path) is first and len(first.done) == 1
    path.write_text("".join(lines))  # the sweep went on
    assert len(cached_log(path).done) == len(read_log(run_log).done) == 6


def test_the_gallery_follows_its_rule_and_is_not_cherry_picked() -> None:
    gallery = load_gallery()
    assert "first 3 finished questions" in gallery.rule
    verdicts = []
    for setting in gallery.settings:
        log = cached_log(setting.log)
        # the first (up to 3) finished questions; a sweep that has since gone on keeps its prefix
        assert 1 <= len(setting.questions) <= 3
        assert list(setting.questions) == first_questions(
            log, setting.condition, len(setting.questions)
        )
        verdicts += [setting.unit(q).done["votes"]["RRMaj"]["correct"] for q in setting.questions]
    assert True in verdicts and False in verdicts  # RRMaj fails in the gallery too
    first = gallery.settings[0]
    model = cached_log(first.log).conditions[first.condition]["ensemble"]
    assert first.unit(first.questions[0]).provenance().startswith(f"{model} · 2026-")
