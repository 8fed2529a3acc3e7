"""The report directory on real log files (`write_report`): tables, figures, bad input, the final
speaker; one small real run reported and exported."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from rrdemo.cli import main as cli_main
from rrdemo.errors import RRError
from rrdemo.report.speakers import final_speaker, openers, speaker_mix
from rrdemo.report.tables import vote_rates
from rrdemo.report.write import write_report
from rrdemo.runs.log import read_log, read_run
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import plan_sweep
from rrdemo.speakers import chunk_roles
from tests.support.fakes import fake_plan, fake_pool, fake_run

LABELS = ("0c3t", "1c2t", "2c1t", "3c0t")


@pytest.fixture
def log(tmp_path) -> Path:
    return fake_run(tmp_path / "run.jsonl", LABELS)


def test_report_tables_agree_with_the_runs_own_votes(log, tmp_path):
    out = tmp_path / "report"
    written = write_report(log, out, png=False)
    names = {p.name for p in written}
    for stem in ("main_table", "m_scaling", "final_speaker", "k_ablation", "asymmetric_yield"):
        assert {f"{stem}.md", f"{stem}.csv"} <= names
    assert {"rho.html", "m_scaling.html", "report.md"} <= names
    # M = N = M*: the pool estimate is the logged decision (the scripted agents never tie)
    expected = {
        (r.condition["label"], method): accuracy
        for r in vote_rates(read_log(log))
        for method, accuracy in r.accuracy.items()
    }
    with (out / "main_table.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["method"] != "Delta"]
    assert len(rows) == 2 * len(LABELS)
    for r in rows:
        assert float(r["accuracy"]) == pytest.approx(expected[(r["config"], r["method"])])
        assert float(r["ci_lo"]) <= float(r["accuracy"]) <= float(r["ci_hi"])
    table = (out / "main_table.md").read_text()
    assert "Ceiling (0c3t)" in table and "Floor (3c0t)" in table
    assert "1c2t MAJ" in table and "2c1t RRMaj" in table and "2c1t Δ" in table
    html = (out / "rho.html").read_text()
    assert "ρ = 0.5" in html or "\\u03c1 = 0.5" in html


def test_report_ignores_an_unfinished_unit_and_a_cut_last_line(log, tmp_path):
    full = read_run(log)
    lines = log.read_text().splitlines(keepends=True)
    last_done = max(i for i, line in enumerate(lines) if '"type":"done"' in line)
    cut = tmp_path / "cut.jsonl"
    # drop the last done line (its unit is unfinished) and end with half a line
    cut.write_text("".join(lines[:last_done]) + lines[last_done][:25])
    partial = read_run(cut)
    assert partial.units == full.units - 1
    assert len(partial.outcomes) == len(full.outcomes) - 6  # 3 MAJ answers + 3 RR trajectories


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"hello": "world"}\n', "not an rrdemo experiment log"),
        ("this is not json\n", "not an rrdemo experiment log"),
        ("", "not an rrdemo experiment log"),
        (
            '{"type":"header","format":"rrdemo-experiment","version":99,"conditions":[]}\n',
            "version 99",
        ),
    ],
)
def test_foreign_or_malformed_logs_are_refused_and_nothing_is_overwritten(
    tmp_path, content, message, capsys
):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    out = tmp_path / "report"
    out.mkdir()
    (out / "main_table.md").write_text("an earlier report")
    with pytest.raises(RRError, match=message):
        write_report(bad, out)
    assert [p.name for p in out.iterdir()] == ["main_table.md"]
    assert (out / "main_table.md").read_text() == "an earlier report"
    assert cli_main(["report", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message.split()[0] in err[0]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report-")]


def test_a_damaged_line_inside_a_log_is_named(log, tmp_path):
    lines = log.read_text().splitlines(keepends=True)
    lines[3] = "{garbage\n"
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("".join(lines))
    with pytest.raises(RRError, match="line 4 is not valid JSON"):
        read_run(damaged)


def test_a_log_with_no_finished_question_says_so(tmp_path):
    run_log = tmp_path / "started.jsonl"
    with pytest.raises(RuntimeError):
        run_plan(fake_plan(labels=("1c2t",)), run_log, fake_pool(fail_after=1), progress=False)
    with pytest.raises(RRError, match="no finished questions"):
        read_run(run_log)
    with pytest.raises(RRError, match="does not exist"):
        read_run(tmp_path / "missing.jsonl")


@pytest.mark.slow
def test_figures_are_written_as_html_and_png(log, tmp_path):
    out = tmp_path / "report"
    write_report(log, out)
    how = (out / "figures.txt").read_text()
    if "no PNG" in how:
        pytest.skip(f"no PNG backend on this machine: {how}")
    for stem in ("rho", "m_scaling"):
        assert (out / f"{stem}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_same_log_writes_the_same_report(log, tmp_path):
    """A committed report is rewritten byte for byte from its log (no random ids, no times)."""
    first, again = tmp_path / "first", tmp_path / "again"
    write_report(log, first, png=False)
    write_report(log, again, png=False)
    names = sorted(p.name for p in first.iterdir())
    assert "rho.html" in names and names == sorted(p.name for p in again.iterdir())
    for name in names:
        assert (first / name).read_bytes() == (again / name).read_bytes(), name


# -- one small real run, end to end ---------------------------------------------------------------------
@pytest.mark.slow
def test_real_run_reports_and_exports(tmp_path, real_pool):
    plan = plan_sweep(
        {
            "tasks": "gsm8k",
            "configs": "0c2t,1c1t",
            "strengths": "strong",
            "k": 4,
            "max_tokens": 8,
            "n": 1,
            "m_star": 2,
        }  # fmt: skip
    )
    log = tmp_path / "real.jsonl"
    run_plan(plan, log, real_pool, progress=False)
    written = write_report(log, tmp_path / "report", png=False)
    assert any(p.name == "main_table.md" for p in written)
    out = tmp_path / "real.submission.json"
    assert cli_main(["export", str(log), "--submitter", "ci", "--out", str(out)]) == 0
    assert len(json.loads(out.read_text())["results"]) == 2


def test_report_counts_mixed_trajectories_and_tests_final_speaker_on_them_only(log, tmp_path):
    # Ground truth from the log's own chunks, per condition.
    mixed: dict[str, list[tuple[bool, bool]]] = {}
    for line in log.read_text().splitlines()[1:]:
        record = json.loads(line)
        if record["type"] == "trajectory" and record["method"] == "RRMaj":
            is_mixed = chunk_roles(record["chunks"]) == {"corrupted", "honest"}
            mixed.setdefault(record["condition"], []).append((is_mixed, record["correct"]))
    run = read_run(log)
    rows = {(r.label, r.strength, r.k): r for r in speaker_mix(run.outcomes)}
    header = json.loads(log.read_text().splitlines()[0])
    for cond in header["conditions"]:
        row = rows[(cond["label"], cond["strength"], cond["k"])]
        truth = mixed[cond["key"]]
        assert row.trajectories == len(truth)
        assert row.mixed_n == sum(m for m, _ in truth)
        if row.mixed_n:
            assert row.mixed_acc == pytest.approx(sum(c for m, c in truth if m) / row.mixed_n)
        if cond["c"] in (0, cond["n"]):
            assert row.mixed_n == 0  # one role only: nothing can be mixed
    assert any(r.mixed_n for r in rows.values())
    only = final_speaker(run.outcomes, mixed_only=True)
    assert sum(r.clean_n + r.corrupt_n for r in only) == sum(
        m for cond, t in mixed.items() for m, _ in t
    )
    opened = {}  # condition -> (first writer's role, only corrupted agents wrote, correct)
    for line in log.read_text().splitlines()[1:]:
        record = json.loads(line)
        if record["type"] == "trajectory" and record["method"] == "RRMaj":
            written = [ch["role"] for ch in record["chunks"] if ch["n_tokens"] > 0]
            if written:
                entry = (written[0], set(written) == {"corrupted"}, record["correct"])
                opened.setdefault(record["condition"], []).append(entry)
    by_label = {(r.label, r.strength, r.k): r for r in openers(run.outcomes)}
    for cond in header["conditions"]:
        if not 0 < cond["c"] < cond["n"]:
            continue
        found, truth = by_label[(cond["label"], cond["strength"], cond["k"])], opened[cond["key"]]
        bad = [t for t in truth if t[0] == "corrupted"]
        assert (found.trajectories, found.corrupt_open_n) == (len(truth), len(bad))
        assert found.corrupt_only_n == sum(only for _, only, _ in bad)
        assert found.honest_open_n == len(truth) - len(bad)
    out = tmp_path / "report"
    write_report(log, out, png=False)
    text = (out / "report.md").read_text()
    assert "## Final speaker (mixed RR trajectories only" in text
    assert "## Who opened the RR trajectories" in text
    assert "Mixed trajectories" in (out / "speaker_mix.md").read_text()


def test_a_metered_log_gets_theory_fit_with_the_parameters_and_the_bound(tmp_path):
    path = tmp_path / "metered.jsonl"
    run_plan(fake_plan(labels=LABELS, meter=True), path, fake_pool(), progress=False)
    out = tmp_path / "report"
    names = {p.name for p in write_report(path, out, png=False)}
    assert {"theory_fit.md", "theory_fit.json"} <= names
    text = (out / "theory_fit.md").read_text()
    assert (
        "gamma_H" in text
        and "rho_max(K)" in text
        and "| obey | fake | 3 | RRMaj | honest |" in text
    )
    assert "theory_fit.md" in (out / "report.md").read_text()


def test_a_log_without_the_meter_gets_no_theory_fit(log, tmp_path):
    names = {p.name for p in write_report(log, tmp_path / "plain", png=False)}
    assert "theory_fit.md" not in names


def test_the_summary_names_each_configs_questions_where_they_differ() -> None:
    from rrdemo.report.write import questions_text

    def cond(task: str, label: str, n: int) -> dict:
        return {"task": task, "label": label, "questions": [f"{task}-{i}" for i in range(n)]}

    same = [cond("logic3", "0c5t", 8), cond("logic3", "3c2t", 8), cond("gsm8k", "3c2t", 6)]
    assert questions_text(same) == "gsm8k 6, logic3 8"
    counted = [cond("arith2", "3c2t", 80), cond("arith2", "0c5t", 40), cond("arith2", "5c0t", 40)]
    assert questions_text(counted) == "arith2 80 (3c2t 80; 0c5t, 5c0t 40)"
