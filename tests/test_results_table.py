"""The results table of the README, the About tab and docs/evidence.md: one table, the same in
all three, each finished evidence run's row holding what its committed report measured (the run's
own decisions, paired per question: `rrdemo.report.paired`, `rrdemo.report.policies`), the power
beside it and the verdict its interval gives (`rrdemo.report.pooled.verdict`); a run without a
report yet says running. The pooled row is the pool study's, and that is what
`rrdemo.report.pool_report` computes from the committed logs today."""

from __future__ import annotations

import csv
from pathlib import Path

import yaml

from rrdemo.report.paired import PairedRow, detectable_text
from rrdemo.report.pool_report import pool_logs
from rrdemo.report.pooled import verdict
from rrdemo.report.render import pct
from rrdemo.study.file import load_study
from ui.about import about_markdown

ROOT = Path(__file__).resolve().parents[1]
HEADER = "| evidence run |"
COLUMNS = ["evidence run", "task", "style", "injection", "config", "questions", "MAJ", "RRMaj"]
COLUMNS += ["RRMaj - MAJ [95%]", "McNemar p", "smallest lead detectable (80% power)", "verdict"]
POOL = ROOT / "assets" / "evidence_pool"
POOLED = "**pooled** (`evidence_pool`)"


def results_table(text: str) -> list[list[str]]:
    """The rows (header first) of the table whose header starts with `HEADER`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(HEADER))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        if not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def _csv_row(path: Path, label: str) -> dict[str, str]:
    with path.open(encoding="utf-8") as f:
        return next(r for r in csv.DictReader(f) if r["label"] == label)


def measured(run: str, label: str) -> PairedRow | None:
    """The run's paired result at `label` from its committed report (None: no report yet).
    A policy run (`pass`) is paired with the `end` run's MAJ on the same questions."""
    report = ROOT / "assets" / run / "report"
    if (report / "paired.csv").exists():
        r = _csv_row(report / "paired.csv", label)
        keys = ("maj", "rrmaj", "delta", "delta_lo", "delta_hi", "p_mcnemar", "detectable")
        b, c = int(r["maj_only"]), int(r["rrmaj_only"])
    elif (report / "policies.csv").exists():
        r = _csv_row(report / "policies.csv", label)
        keys = ("maj", "rrmaj_other", "other_vs_maj_delta", "other_vs_maj_lo")
        keys += ("other_vs_maj_hi", "other_vs_maj_p_mcnemar", "other_vs_maj_detectable")
        b, c = int(r["other_vs_maj_first_only"]), int(r["other_vs_maj_second_only"])
    else:
        return None
    values = [float(r[k]) if r[k] else None for k in keys]
    return PairedRow(r["task"], label, r["strength"], r["ensemble"], int(r["questions"]),
                     *values[:5], b, c, *values[5:])  # fmt: skip


def expected_cells(row: PairedRow) -> list[str]:
    difference = f"{pct(row.delta, True)} [{pct(row.delta_lo, True)}, {pct(row.delta_hi, True)}]"
    return [str(row.questions), pct(row.maj), pct(row.rrmaj), difference,
            f"{row.p_mcnemar:.2g}", detectable_text(row.detectable),
            verdict(row.delta_lo, row.delta_hi)]  # fmt: skip


def test_readme_about_and_evidence_carry_one_table() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 160, "the README is a front page"
    readme = results_table(text)
    assert readme[0] == COLUMNS
    assert results_table(about_markdown()) == readme
    assert results_table((ROOT / "docs" / "evidence.md").read_text(encoding="utf-8")) == readme


def test_each_row_is_what_its_run_measured_or_says_it_is_running() -> None:
    rows = results_table((ROOT / "README.md").read_text(encoding="utf-8"))[1:]
    finished = 0
    for cells in rows:
        if cells[0] == POOLED:
            continue
        run = cells[0].strip("`")
        study = yaml.safe_load((ROOT / "assets" / run / "study.yaml").read_text(encoding="utf-8"))
        settings = study["settings"]
        label, policy = (part.strip(" `") for part in cells[4].split(","))
        assert [cells[2], cells[3], policy] == [
            settings["prompt_style"], settings["strengths"][0], settings["eos_policy"]
        ], run  # fmt: skip
        row = measured(run, label)
        if row is None:
            assert cells[-1].startswith("running"), run
            continue
        finished += 1
        assert cells[5:] == expected_cells(row), run
    reports = {p.parent.name for p in (ROOT / "assets").glob("evidence*/report")} - {POOL.name}
    assert finished == len(reports) >= 3, "every committed evidence report has its row"


def _pooled_csv() -> dict[str, str]:
    with (POOL / "report" / "pooled.csv").open(encoding="utf-8") as f:
        return next(r for r in csv.DictReader(f) if r["run"] == "pooled")


def test_the_pooled_row_is_the_pool_of_the_committed_logs() -> None:
    """README's pooled row holds the pool study's numbers, and those are what the library
    computes from the committed logs now (not a copy of an older build)."""
    rows = results_table((ROOT / "README.md").read_text(encoding="utf-8"))[1:]
    (cells,) = [c for c in rows if c[0] == POOLED]
    study = load_study(POOL / "study.yaml")
    pool = pool_logs(list(study.pooled), study.settings["config"])
    e = pool.pooled
    assert e is not None and e.boot == 10_000
    r = _pooled_csv()
    assert int(r["questions"]) == e.questions and int(r["maj_only"]) == e.maj_only
    assert float(r["lo"]) == e.lo and float(r["hi"]) == e.hi and float(r["delta"]) == e.delta
    difference = f"{pct(e.delta, True)} [{pct(e.lo, True)}, {pct(e.hi, True)}]"
    assert cells[4] == f"{study.settings['config']}, `end`"
    assert cells[5:] == [str(e.questions), pct(e.maj), pct(e.rrmaj), difference,
                         f"{e.p_mcnemar:.2g}", detectable_text(e.detectable), e.verdict]  # fmt: skip
    named = [f"`{name}`" for name in pool.pooled_names]
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(name in text for name in named)
    # every run it pools has its own row above it, the same run's numbers
    runs = {c[0].strip("`") for c in rows if c[0] != POOLED}
    assert set(pool.pooled_names) <= runs
