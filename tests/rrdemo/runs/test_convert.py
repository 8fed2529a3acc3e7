"""`rrdemo convert-logs` (rrdemo.runs.convert): a log of version 1 or 2 becomes exactly what the current writer writes
(same lines, new config hashes and keys), in place, idempotently, and resumes without re-running
a unit; the gallery follows the new keys; the reader refuses an older log and names the command."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from rrdemo.cli import main
from rrdemo.errors import RRError
from rrdemo.jsonl import LogWriter
from rrdemo.runs.convert import convert_file
from rrdemo.runs.log import LOG_VERSION, read_log
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import plan_sweep
from rrdemo.runs.write import header_for, open_log
from rrdemo.study.file import find_studies, load_study
from tests.support.fakes import FakeBackend, FakePool, obeys_injection

ROOT = Path(__file__).resolve().parents[3]

# What version 2 left out of a config, and of the sweep, while it held this default.
V2_CONFIG_DEFAULTS = {
    "eos_policy": "end",
    "prompt_style": "direct",
    "adversary": "static",
    "turn_policy": "fixed",
    "k_min": None,
    "entropy_threshold": 2.0,
    "meter": False,
}
V2_SWEEP_DEFAULTS = {
    "adversaries": ["static"],
    "eos_policy": "end",
    "prompt_style": "direct",
    "turn_policies": ["fixed"],
    "k_min": None,
    "entropy_threshold": 2.0,
    "meter": False,
    "backend": "transformers",
}


def _sweep(tmp_path: Path):
    """A real sweep (a benchmark-free demo task, two ensembles of a scripted model, two
    adversaries) and its log, written by the current writer."""
    plan = plan_sweep(
        {
            "tasks": "demo",
            "ensembles": ["fake*, fake, fake", "fake, fake, fake"],
            "adversaries": "static,contextual",
            "strengths": "strong",
            "n": 2,
            "k": 3,
            "m_star": 3,
            "max_tokens": 12,
            "temperature": 0,
            "seed": 1,
        },
        served={"fake"},
    )
    log = tmp_path / "run.jsonl"
    run_plan(plan, log, _pool(), progress=False)
    return plan, log


def _pool() -> FakePool:
    return FakePool(FakeBackend("fake", obeys_injection))


def _v2_config(config: dict) -> dict:
    data = {k: v for k, v in config.items() if V2_CONFIG_DEFAULTS.get(k, object()) != v}
    data["agents"] = [
        {k: v for k, v in a.items() if (k, v) != ("backend", "transformers")}
        for a in config["agents"]
    ]
    return data


def _v2_hash(config: dict) -> str:
    blob = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _as_version_2(text: str) -> str:
    """The same log as an rrdemo with log version 2 wrote it: configs and sweep without the
    fields at their default, hashes and keys of those configs, conditions naming adversary and
    turn policy only when not the paper's."""
    lines = [json.loads(line) for line in text.splitlines()]
    header, keys = lines[0], {}
    header["version"] = 2
    header["sweep"] = {
        k: v for k, v in header["sweep"].items() if V2_SWEEP_DEFAULTS.get(k, object()) != v
    }
    for cond in header["conditions"]:
        cond["config"] = _v2_config(cond["config"])
        cond["config_hash"] = _v2_hash(cond["config"])
        keys[cond["key"]] = cond["key"] = f"{cond['task']}:{cond['config_hash']}"
        for name, default in (("adversary", "static"), ("turn_policy", "fixed")):
            if cond[name] == default:
                del cond[name]
    for record in lines[1:]:
        record["condition"] = keys[record["condition"]]
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in lines)


def _as_version_1(text: str) -> str:
    """A version-2 log as an rrdemo with log version 1 wrote it."""
    lines = []
    for line in text.splitlines():
        record = json.loads(line)
        if record["type"] == "header":
            record["version"] = 1
        for chunk in record.get("chunks", []):
            chunk["role"] = {"honest": "truthful"}.get(chunk["role"], chunk["role"])
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("older", [_as_version_2, lambda text: _as_version_1(_as_version_2(text))])
def test_an_older_log_converts_to_what_the_writer_writes_and_resumes(tmp_path, older) -> None:
    plan, log = _sweep(tmp_path)
    current = log.read_bytes()
    old = older(current.decode())
    keys = [c["key"] for c in json.loads(old.splitlines()[0])["conditions"]]
    assert not set(keys) & {c.key for c in plan.conditions}  # every hash moves
    log.write_text(old)
    with pytest.raises(RRError, match=r"version \d is not supported .*`rrdemo convert-logs "):
        read_log(log)

    changed, renamed = convert_file(log)
    assert changed == len(current.splitlines())  # the header and every record name a condition
    assert renamed == dict(zip(keys, [c.key for c in plan.conditions], strict=True))
    assert log.read_bytes() == current
    assert convert_file(log) == (0, {c.key: c.key for c in plan.conditions})  # idempotent
    assert read_log(log).header["version"] == LOG_VERSION
    assert run_plan(plan, log, _pool(), progress=False).units_run == 0  # resumes, runs nothing


def test_the_gallery_follows_the_new_keys_and_the_file_keeps_its_time(tmp_path) -> None:
    plan, log = _sweep(tmp_path)
    log.write_text(_as_version_2(log.read_text()))
    old_key = json.loads(log.read_text().splitlines()[0])["conditions"][1]["key"]
    setting = {"name": "n", "description": "d", "log": log.name, "condition": old_key}
    other = {**setting, "log": "other.jsonl"}
    manifest = tmp_path / "gallery.json"
    manifest.write_text(json.dumps({"settings": [setting, other]}))
    stamp = 1_700_000_000
    os.utime(log, (stamp, stamp))

    assert main(["convert-logs", str(log), "--gallery", str(manifest)]) == 0
    settings = json.loads(manifest.read_text())["settings"]
    assert [s["condition"] for s in settings] == [plan.conditions[1].key, old_key]
    assert log.stat().st_mtime == stamp  # an export dates the run by it


def test_a_log_being_written_is_not_converted(tmp_path) -> None:
    _, log = _sweep(tmp_path)
    writer = LogWriter(log)
    try:
        with pytest.raises(RRError, match="another run"):
            convert_file(log)
    finally:
        writer.close()


def test_a_log_of_a_newer_rrdemo_is_refused_without_pointing_at_the_converter(tmp_path) -> None:
    _, log = _sweep(tmp_path)
    lines = log.read_text().splitlines(keepends=True)
    header = {**json.loads(lines[0]), "version": LOG_VERSION + 1}
    log.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    with pytest.raises(RRError, match="written by another rrdemo") as refused:
        read_log(log)
    assert "convert-logs" not in str(refused.value)


def test_the_committed_logs_are_current(tmp_path) -> None:
    for path in sorted((ROOT / "assets").rglob("*.jsonl")):
        if json.loads(path.open().readline()).get("format") == "rrdemo-experiment":
            assert read_log(path).header["version"] == LOG_VERSION, path
            copy = Path(shutil.copy(path, tmp_path / path.name))
            assert convert_file(copy)[0] == 0, path  # rebuilt, the header is the same


def test_the_committed_sweeps_plan_as_logged_and_resume_only_under_their_prompts(
    tmp_path,
) -> None:
    """Each committed sweep's header is what its study file plans today, and it records the
    prompts that produced it. A log made with today's prompts resumes; the old 1.5B sweep's
    prompts showed "The answer is N.", so running it again is refused, naming what changed,
    instead of mixing answers of two prompts."""
    from rrdemo.tasks.benchmarks import prompt_texts

    studies = [load_study(path) for path in find_studies(ROOT / "assets")]
    pairs = [(s.path, s.log) for s in studies if s.kind == "experiment" and s.log.exists()]
    assert {log.parent.name for _, log in pairs} >= {"qwen15b", "evidence", "evidence_aqua"}
    for sweep, log in pairs:
        plan = plan_sweep(load_study(sweep).settings)
        header = read_log(log).header
        assert header["sweep"] == plan.sweep, sweep
        assert header["conditions"] == header_for(plan)["conditions"], sweep
        copy = Path(shutil.copy(log, tmp_path / "log.jsonl"))
        before = copy.read_bytes()
        if header["prompts"] == prompt_texts():
            writer, _ = open_log(copy, plan)  # resumes
            writer.close()
            continue
        assert "The answer is N." in header["prompts"]["final_format"]["number"]
        with pytest.raises(RRError, match=r"written with other prompts \(work_cue, final_format"):
            open_log(copy, plan)
        assert copy.read_bytes() == before
