"""`rrdemo study FILE run | status | build`: a study file checked whole, its shards run into
`<stem>-I-of-N.jsonl`, merged and published by build (fakes for the logic, real tiny models for
the run)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from rrdemo.cli import main
from rrdemo.report.policies import policy_rows
from rrdemo.runs.log import read_log
from rrdemo.runs.runner import run_plan
from rrdemo.runs.write import merge_logs
from rrdemo.study.build import build, build_steps
from rrdemo.study.file import load_study
from tests.support.fakes import fake_plan, fake_pool

ROOT = Path(__file__).resolve().parents[3]
STUDY = """kind: experiment
log: log.jsonl
shards: 2
settings: {tasks: [logic3]}
publish:
  report: report
  board: {out: submission.json, created: "2026-11-20T10:00:00", notes: "a fake run"}
  gallery: {manifest: gallery.json, recorded: "2026-11-20"}
"""
OTHER = {"name": "Other", "description": "another log", "log": "other.jsonl",
         "condition": "logic3:x", "questions": ["q1"]}  # fmt: skip


def _study(folder: Path, text: str = STUDY) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "study.yaml"
    path.write_text(text)
    manifest = {"rule": "first 3", "logs": {"other.jsonl": {"recorded": "2026-01-01"}}}
    (folder / "gallery.json").write_text(json.dumps({**manifest, "settings": [OTHER]}))
    return path


def _run_shards(study, shards=(1, 2)) -> None:
    plan = fake_plan(labels=("0c5t", "3c2t"), task_name="logic3", m_star=5)
    for index in shards:
        run_plan(plan, study.shard_log(index), fake_pool(), progress=False, shard=(index, 2))


@pytest.mark.parametrize(
    "text, message",
    [
        ("kind: sweep\nlog: log.jsonl\nsettings: {n: 2}\n", "kind must be one of experiment, calibration"),
        ("kind: experiment\nlog: log.jsonl\nsettings: {n: 2}\nshard: 2\n", "unknown key shard"),
        ("kind: experiment\nlog: log.jsonl\nsettings: {n: 2}\nshards: 0\n", "shards must be a whole number from 1 to 64"),
        ("kind: experiment\nlog: log.txt\nsettings: {n: 2}\n", "must be a .jsonl file"),
        ("kind: experiment\nlog: log.jsonl\n", "settings must be a mapping"),
        ("kind: calibration\nlog: c.jsonl\nsettings: {n: 2}\npublish: {board: {}}\n", "publishes a report only"),
        (STUDY.replace('"2026-11-20T10:00:00"', "26/11/2026"), "is not a date; give YYYY-MM-DD"),
        (STUDY.replace("report: report", "repot: report"), "unknown key repot"),
        ("kind: calibration\nlog: c.jsonl\nsettings: {n: 2}\npublish: {report: r, paired_with: b.jsonl}\n", "paired_with needs an experiment"),
        (STUDY.replace("report: report", "report: report\n  paired_with: base.txt"), "must be a .jsonl file"),
        ("kind: experiment\nlog: log.jsonl\nsettings: {n: 2}\nthroughput: {tokens_per_s: 0}\n", "throughput.tokens_per_s must be a positive number"),
    ],
)  # fmt: skip
def test_a_bad_study_file_is_one_clear_message(tmp_path, capsys, text, message) -> None:
    path = _study(tmp_path / "s", text)
    for verb in ("run", "status", "build"):
        assert main(["study", str(path), verb]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    assert sorted(p.name for p in path.parent.iterdir()) == ["gallery.json", "study.yaml"]


def test_build_merges_the_shards_and_publishes_the_same_bytes_again(tmp_path, capsys) -> None:
    study = load_study(_study(tmp_path / "s"))
    assert main(["study", str(study.path), "build"]) == 2
    assert "no log to build from yet" in capsys.readouterr().err
    _run_shards(study, shards=(1,))
    build(study)  # a run under way: its report, not its board rows
    assert (study.report / "report.md").is_file() and not study.board.out.exists()
    _run_shards(study, shards=(2,))
    assert main(["study", str(study.path), "build", "--dry-run"]) == 0
    steps = capsys.readouterr().out
    assert "log.jsonl + log-1-of-2.jsonl + log-2-of-2.jsonl" in steps and "report" in steps
    assert main(["study", str(study.path), "build"]) == 0
    expected = tmp_path / "expected.jsonl"
    merge_logs(study.shard_logs(), expected)
    assert set(read_log(study.log).done) == set(read_log(expected).done)
    assert len(read_log(study.log).done) == fake_plan(labels=("0c5t", "3c2t")).n_units
    board = json.loads(study.board.out.read_text())
    assert board["source"] == "rrdemo" and board["created"].startswith("2026-11-20T10:00:00")
    gallery = json.loads(study.gallery.manifest.read_text())
    # a new log goes after the current runs: the setting the Arena opens on stays first
    assert [s["log"] for s in gallery["settings"]][0] == "other.jsonl"
    assert gallery["settings"][-1]["log"] == "log.jsonl"
    assert list(gallery["logs"]) == ["other.jsonl", "log.jsonl"]
    published = {p: p.read_bytes() for p in study.path.parent.rglob("*") if p.is_file()}
    assert main(["study", str(study.path), "build"]) == 0  # again: nothing changes
    assert {p: p.read_bytes() for p in study.path.parent.rglob("*") if p.is_file()} == published
    assert main(["study", str(study.path), "status"]) == 0
    assert "log-2-of-2.jsonl" in capsys.readouterr().out


def test_a_shard_is_named_as_the_running_calibration_names_it() -> None:
    study = load_study(ROOT / "assets" / "calibration" / "qwen15b_styles.study.yaml")
    assert [p.relative_to(ROOT).as_posix() for p in study.shard_logs()] == [
        "assets/calibration/qwen15b_styles-1-of-2.jsonl",
        "assets/calibration/qwen15b_styles-2-of-2.jsonl",
    ]
    assert study.report.name == "qwen15b_styles_report" and study.batch == 16


def test_the_styles_study_resumes_the_logs_its_calibrate_command_began() -> None:
    """The shards were started as `rrdemo calibrate ... --shard I/2 --out
    assets/calibration/qwen15b_styles-I-of-2.jsonl`: the study plans the same header, so its
    `run --shard I/2` continues them (a log resumes only under the header it was begun with)."""
    from rrdemo.calibration.log import calibration_changes, header_for
    from rrdemo.calibration.plan import plan_calibration
    from rrdemo.cli.calibrate import _SETTINGS

    flags = dict.fromkeys(_SETTINGS)
    flags.update(
        models="qwen2.5-coder-1.5b",
        tasks="gsm8k,aqua,math500,logic3,logic7,track7,arith2,arith4,arith6",
        styles="direct,step-by-step",
        n="40",
        max_tokens="512",
    )
    study = load_study(ROOT / "assets" / "calibration" / "qwen15b_styles.study.yaml")
    began = header_for(plan_calibration(flags))
    assert calibration_changes(began, header_for(plan_calibration(study.settings))) == ""


def test_run_takes_only_the_studys_own_shard_count(capsys) -> None:
    path = ROOT / "assets" / "evidence_aqua" / "study.yaml"
    assert main(["study", str(path), "run", "--shard", "1/3", "--dry-run"]) == 2
    assert "runs as 2 shard(s); give --shard I/2" in capsys.readouterr().err
    assert main(["study", str(path), "status", "--shard", "1/2"]) == 2
    assert "--shard is for run" in capsys.readouterr().err


def test_status_and_the_build_plan_of_a_committed_calibration(capsys) -> None:
    path = ROOT / "assets" / "calibration" / "qwen05b.study.yaml"
    answers = len(path.with_name("qwen05b.jsonl").read_text().splitlines()) - 1
    assert main(["study", str(path), "status"]) == 0
    assert f"{answers} of {answers} answers done, 0 left" in capsys.readouterr().out
    study = load_study(path)
    assert build_steps(study) == [
        f"re-extract the answers of {study.log} with today's rules (rewritten)",
        f"report -> {study.report}/",
    ]
    assert main(["study", str(path), "run", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert f"{answers} already in" in err and ", 0 left" in err  # only the work left is counted
    assert f"at most {answers} answers" not in err
    assert len(out.splitlines()) == 18  # one line per cell: 6 tasks x 3 injections


# -- real tiny models: two shards run through the command, then built ---------------------------
@pytest.mark.slow
def test_a_real_experiment_study_runs_in_two_shards_and_builds(tmp_path, capsys) -> None:
    text = """kind: experiment
log: log.jsonl
shards: 2
settings: {tasks: [logic3], models: [smollm2], configs: [0c2t, 1c1t], strengths: [strong],
           k: [4], max_tokens: 8, n: 1, m_star: 2, backend: auto}
publish: {report: report}
"""
    path = _study(tmp_path / "real", text)
    assert main(["study", str(path), "run", "--dry-run"]) == 0
    assert "decode" in capsys.readouterr().err
    for shard in ("1/2", "2/2"):
        assert main(["study", str(path), "run", "--shard", shard, "--quiet"]) == 0
    study = load_study(path)
    assert all(p.is_file() for p in study.shard_logs()) and not study.log.exists()
    assert main(["study", str(path), "run", "--shard", "1/2", "--quiet"]) == 0  # resumes
    assert "0 units run" in capsys.readouterr().err
    assert main(["study", str(path), "build"]) == 0
    assert len(read_log(study.log).done) == 2 and (study.report / "main_table.md").is_file()


@pytest.mark.slow
def test_a_real_calibration_study_runs_in_two_shards_and_builds(tmp_path, capsys) -> None:
    text = """kind: calibration
log: cal.jsonl
shards: 2
batch: 2
settings: {models: [smollm2], tasks: [logic3], injections: [none, moderate], n: 2, max_tokens: 8}
publish: {reextract: true, report: cal_report}
"""
    path = _study(tmp_path / "cal", text)
    for shard in ("1/2", "2/2"):
        assert main(["study", str(path), "run", "--shard", shard, "--quiet"]) == 0
    study = load_study(path)
    assert [p.name for p in study.logs()] == ["cal-1-of-2.jsonl", "cal-2-of-2.jsonl"]
    assert main(["study", str(path), "status"]) == 0
    assert "4 of 4 answers done, 0 left" in capsys.readouterr().out
    assert main(["study", str(path), "build"]) == 0
    assert (study.report / "calibration.md").is_file()
    assert len(study.log.read_text().splitlines()) == 1 + 4


def test_a_paired_study_reports_its_rrmaj_beside_the_base_runs_decisions(tmp_path, capsys) -> None:
    """`publish.paired_with`: the build's report pairs this run's RRMaj with the base run's MAJ
    and RRMaj (rrdemo.report.policies)."""
    # a benchmark, and settings the gallery lists: the run publishes board rows and recordings
    plan = fake_plan(labels=("0c5t", "3c2t"), task_name="logic3", m_star=5)
    run_plan(plan, tmp_path / "base.jsonl", fake_pool(), progress=False)
    text = STUDY.replace("shards: 2\n", "").replace(
        "report: report", "report: report\n  paired_with: ../base.jsonl"
    )
    path = _study(tmp_path / "s", text)
    study = load_study(path)
    assert study.paired_with == tmp_path / "s" / ".." / "base.jsonl"
    rr_only = tuple(
        dataclasses.replace(
            c, config=dataclasses.replace(c.config, eos_policy="pass"), methods=("RRMaj",)
        )
        for c in plan.conditions
    )
    rr_only_plan = dataclasses.replace(
        plan, sweep={**plan.sweep, "methods": ["RRMaj"]}, conditions=rr_only
    )
    run_plan(rr_only_plan, study.log, fake_pool(), progress=False)
    assert main(["study", str(path), "build"]) == 0
    policies = (study.report / "policies.md").read_text()
    assert policies.count("| logic3 |") == 2  # one row per condition, paired per question
    # Its board rows: this run's RRMaj beside the base run's MAJ, labelled with the policy,
    # the numbers of policies.csv (RRMaj(other) against MAJ).
    rows = {r.label: r for r in policy_rows(read_log(tmp_path / "base.jsonl"), read_log(study.log))}
    board = json.loads(study.board.out.read_text())["results"]
    assert len(board) == len(rows) == 2
    for row in board:
        label = f"{row['n_corrupted']}c{row['n_honest']}t"
        assert row["eos_policy"] == "pass"
        assert row["maj_accuracy"] == pytest.approx(rows[label].maj, abs=1e-6)
        assert row["rrmaj_accuracy"] == pytest.approx(rows[label].rrmaj_other, abs=1e-6)
    # Its gallery settings name the base log; a recording plays both methods, MAJ from the base.
    from rrdemo.gallery import load_gallery

    gallery = load_gallery(study.gallery.manifest)
    ours = [s for s in gallery.settings if s.log.name == "log.jsonl"]
    assert ours and all(s.paired_with.name == "base.jsonl" for s in ours)
    unit = ours[0].unit(ours[0].questions[0])
    assert set(unit.done["votes"]) == {"MAJ", "RRMaj"}
    assert {t["method"] for t in unit.trajectories} == {"MAJ", "RRMaj"}
    outcome = ours[0].outcome()
    assert outcome is not None and outcome.row.rrmaj == pytest.approx(
        rows[ours[0].name.split()[-1]].rrmaj_other
    )


@pytest.mark.parametrize(
    "style, policy, prefix",
    [("direct", "end", ""), ("step-by-step", "end", "step-by-step · "),
     ("direct", "pass", "pass · "), ("step-by-step", "pass", "step-by-step · pass · ")],
)  # fmt: skip
def test_a_gallery_setting_names_a_style_and_policy_that_are_not_the_defaults(
    tmp_path, style, policy, prefix
) -> None:
    """The Arena lists a log's settings by name: the same question under `direct` and under
    `step-by-step` must not both read "moderate 3c2t"."""
    from dataclasses import replace

    from rrdemo.study.gallery import log_settings

    plan = fake_plan(labels=("0c5t", "3c2t"), task_name="logic3", m_star=5)
    conditions = tuple(
        replace(c, config=replace(c.config, prompt_style=style, eos_policy=policy))
        for c in plan.conditions
    )
    log = tmp_path / "log.jsonl"
    run_plan(replace(plan, conditions=conditions), log, fake_pool(), progress=False)
    settings = log_settings(log, "log.jsonl")
    assert [s["name"] for s in settings] == [f"{prefix}strong 3c2t", f"{prefix}0c5t"]
    said = [("step-by-step" in s["description"], "pass" in s["description"]) for s in settings]
    assert said == [(style != "direct", policy != "end")] * 2


def test_a_shard_log_is_known_by_its_name_and_the_merged_log_is_not() -> None:
    """The calibration view hides shard logs by name (`Study.is_shard_log`): the name it
    recognises is the one `shard_log` writes, for any shard count."""
    from rrdemo.study.file import Study

    study = load_study(Path(__file__).resolve().parents[3] / "assets/evidence/study.yaml")
    assert not Study.is_shard_log(study.log)
    assert all(Study.is_shard_log(study.shard_log(i, n)) for n in (2, 12) for i in range(1, n + 1))
    assert not Study.is_shard_log(Path("log-1-of-2-b.jsonl"))
