"""The paper beside a run: the matching functions (rows in, rows out), and `rrdemo report` on the
shipped small real run (assets/experiment_small.jsonl)."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest

from rrdemo.cli import main as cli_main
from rrdemo.report.paper import tables as paper
from rrdemo.report.paper.beside import PAPER, RUN, beside_csv, beside_markdown, model_note
from rrdemo.report.paper.main_tables import main_lines
from rrdemo.report.paper.match import k_beside, scaling_3c2t_beside, scaling_beside, speaker_beside
from rrdemo.report.paper.settings import SettingResult, hetero_beside, settings_beside
from rrdemo.report.speakers import SpeakerRow
from rrdemo.report.tables import KPoint, ScalingPoint
from rrdemo.report.write import build_report
from rrdemo.runs.log import read_run

SMALL_RUN = Path(__file__).resolve().parents[4] / "assets" / "experiment_small.jsonl"


def _point(label, method, m, mean, task="all", strength="strong", k=32) -> ScalingPoint:
    return ScalingPoint("tiny", strength, k, label, task, method, m, mean, 0.0)


def _lines(table, source):
    return [r for r in table.rows if r.source == source]


# -- M scaling ----------------------------------------------------------------------------------
def test_m_scaling_matches_strength_config_and_method_and_keeps_every_m() -> None:
    points = [
        _point("3c2t", "MAJ", 1, 0.10),
        _point("3c2t", "MAJ", 3, 0.20),
        _point("3c2t", "MAJ", 5, 0.25, task="logic3"),  # per dataset: not in the averages table
        _point("2c3t", "MAJ", 1, 0.50),  # the paper has no 2c3t scaling line
        _point("4c1t", "RRMaj", 1, 0.40, strength="moderate"),
    ]
    table = scaling_beside(points)
    assert table.value_columns == ("M=1", "M=3", "M=5", "M=10", "M=20", "M=30", "M=40")
    assert [(r.key, r.source) for r in table.rows] == [
        (("3c2t", "strong", "MAJ"), PAPER),
        (("3c2t", "strong", "MAJ"), RUN),
        (("4c1t", "moderate", "RRMaj"), PAPER),
        (("4c1t", "moderate", "RRMaj"), RUN),
    ]
    printed = next(
        r for r in paper.SCALING if (r.strength, r.config, r.method) == ("strong", "3c2t", "MAJ")
    )
    assert table.rows[0].values == (printed.mean[0], None, *printed.mean[1:])
    assert table.rows[1].values[:3] == (pytest.approx(10.0), pytest.approx(20.0), None)
    assert table.rows[1].who == "tiny, K=32"
    assert "does not name the model" in table.note


def test_m_scaling_without_a_match_says_what_to_run() -> None:
    table = scaling_beside([_point("1c4t", "MAJ", 1, 0.5)])
    assert table.rows == ()
    assert "1c4t (strong)" in table.note and "--configs 3c2t,4c1t" in table.note


def test_3c2t_breakdown_matches_dataset_and_method_only_under_strong() -> None:
    points = [
        _point("3c2t", "RRMaj", 1, 0.6, task="gsm8k"),
        _point("3c2t", "RRMaj", 1, 0.6, task="gsm8k", strength="moderate"),
        _point("3c2t", "Delta", 1, 0.1, task="gsm8k"),
    ]
    table = scaling_3c2t_beside(points)
    assert [(r.key, r.source) for r in table.rows] == [
        (("gsm8k", "RRMaj"), PAPER),
        (("gsm8k", "RRMaj"), RUN),
    ]
    assert table.value_columns == ("M=1", "M=40")
    assert table.rows[0].values == (67.5, 87.5)
    assert len(_lines(table, RUN)) == 1  # the moderate point is not set beside a strong table


# -- final speaker ------------------------------------------------------------------------------
def test_final_speaker_matches_the_config_and_keeps_counts_and_p() -> None:
    rows = [
        SpeakerRow("tiny", "strong", 32, "3c2t", 0.6, 10, 0.5, 30, 0.2, 0.3, 0.07),
        SpeakerRow("tiny", "strong", 32, "1c2t", 1 / 3, 5, 0.5, 5, 0.5, 0.0, 1.0),  # N = 3
        SpeakerRow("tiny", "moderate", 32, "4c1t", 0.8, 0, math.nan, 9, 0.1, math.nan, math.nan),
    ]
    table = speaker_beside(rows)
    keys = [(r.key, r.source, r.who) for r in table.rows]
    assert keys == [
        (("3c2t", "0.6"), PAPER, "Llama-4-Scout-17B"),
        (("3c2t", "0.6"), PAPER, "Mistral-3.1-24B"),
        (("3c2t", "0.6"), RUN, "tiny, strong, K=32"),
        (("4c1t", "0.8"), PAPER, "Llama-4-Scout-17B"),
        (("4c1t", "0.8"), PAPER, "Mistral-3.1-24B"),
        (("4c1t", "0.8"), RUN, "tiny, moderate, K=32"),
    ]
    assert table.rows[0].values == (71.68, 565, 70.84, 871, 0.84, 0.7657)
    assert table.rows[2].values == (50.0, 10, 20.0, 30, 30.0, 0.07)
    assert table.rows[5].values == (None, 0, 10.0, 9, None, None)
    assert "not the paper's Llama-4-Scout-17B, Mistral-3.1-24B" in table.note


# -- K ablation ---------------------------------------------------------------------------------
def test_k_ablation_matches_config_and_dataset_with_every_k_as_a_column() -> None:
    points = [
        KPoint("tiny", "strong", "2c1t", "logic3", 30, 0.25, 0.1),
        KPoint("tiny", "strong", "2c1t", "logic3", 64, 0.5, 0.1),
        KPoint("tiny", "strong", "2c1t", "gsm8k", 30, 0.5, 0.1),  # not in the paper's K table
        KPoint("tiny", "strong", "3c2t", "logic3", 30, 0.5, 0.1),  # another config
    ]
    table = k_beside(points)
    assert table.value_columns == tuple(f"K={k}" for k in (10, 30, 64, 75, 150, 300, 500))
    assert [(r.key, r.source) for r in table.rows] == [
        (("2c1t", "logic3"), PAPER),
        (("2c1t", "logic3"), RUN),
    ]
    assert table.rows[0].values == (10.2, 27.5, None, 32.2, 33.5, 34.8, 34.2)
    assert table.rows[1].values == (None, 25.0, 50.0, None, None, None, None)
    assert "Llama-3-8B" in table.note
    assert k_beside(points[3:]).rows == ()
    assert "--configs 2c1t" in k_beside(points[3:]).note


# -- per setting and heterogeneous --------------------------------------------------------------
def _setting(task, n, c, maj, rrmaj, strength="strong", k=100, ensemble="tiny") -> SettingResult:
    return SettingResult(ensemble, task, strength, k, n, c, maj, rrmaj)


def test_settings_beside_sets_each_condition_beside_the_papers_lines() -> None:
    results = [
        _setting("logic3", 5, 3, 0.2, 0.6),
        _setting("logic3", 5, 0, 0.9, 0.9, strength="moderate"),
        _setting("logic3", 3, 2, 0.1, 0.3, k=150),  # 2c1t at a K of the ablation
        _setting("logic3", 3, 2, 0.1, 0.3, k=16),  # a K the paper did not run
    ]
    table = settings_beside(results)
    by_key: dict[tuple, list] = {}
    for row in table.rows:
        by_key.setdefault(row.key, []).append(row)
    strong = {line.model: line for line in main_lines("strong") if line.dataset == "logic3"}
    rows = by_key[("logic3", "3c2t", "strong")]
    assert rows[0].source == RUN and rows[0].values == pytest.approx((20.0, 60.0, 40.0))
    main = [r for r in rows[1:] if "(K=100, M=5)" in r.who]
    assert len(main) == 5
    for r in main:
        line = strong[r.who.split(" (")[0]]
        assert r.values == (line.maj[2], line.rrmaj[2], line.delta[2])
    assert [r.values for r in rows if "not named" in r.who] == [
        (36.6, 64.9, None),
        (23.8, 83.4, None),
    ]
    ceiling = by_key[("logic3", "0c5t", "moderate")]
    assert all(r.values[1:] == (None, None) for r in ceiling if r.source == PAPER)
    k_rows = by_key[("logic3", "2c1t", "strong")]
    assert [(r.who, r.values) for r in k_rows if r.source == PAPER] == [
        ("Llama-3-8B (K=150, N=M=3)", (None, 33.5, None))
    ]
    assert [r.who for r in k_rows if r.source == RUN] == ["tiny, K=150"]  # K = 16 has no line
    assert "K = 16, 100, 150" in table.note


def test_heterogeneous_ensembles_are_matched_on_n_config_and_strength() -> None:
    mixed = "big*,big*,small"
    results = [
        _setting("gsm8k", 3, 2, 0.2, 0.6, ensemble=mixed),
        _setting("logic3", 3, 2, 0.4, 0.8, ensemble=mixed),
        _setting("logic3", 3, 2, 0.4, 0.8, ensemble="tiny"),  # homogeneous
        _setting("logic3", 3, 2, 0.4, 0.8, ensemble=mixed, strength="moderate"),
    ]
    table = hetero_beside(results)
    printed = [r for r in table.rows if r.source == PAPER]
    assert [r.who for r in printed] == [
        "N3_2big1small: 1×70B+1×8B corrupt | 1×70B+0×8B clean",
        "N3_2big1small: 2×70B+0×8B corrupt | 0×70B+1×8B clean",
        "N3_2small1big: 0×70B+2×8B corrupt | 1×70B+0×8B clean",
        "N3_2small1big: 1×70B+1×8B corrupt | 0×70B+1×8B clean",
    ]
    assert printed[1].values == (13.9, 66.7, 52.8)
    (run,) = _lines(table, RUN)
    assert run.key == ("3", "2c1t") and run.values == pytest.approx((30.0, 70.0, 40.0))
    assert run.who == f"{mixed}, K=100 (mean over gsm8k, logic3)"
    assert hetero_beside(results[2:]).rows == ()


def test_model_note_is_empty_only_for_the_papers_own_models() -> None:
    assert model_note(["smollm2"], ["Llama-3.3-70B"]).startswith("This run used smollm2")
    assert model_note([paper.MODEL_IDS["Llama-3.3-70B"]], ["Llama-3.3-70B"]) == ""
    mixed = f"{paper.MODEL_IDS['Llama-3.3-70B']}*,{paper.MODEL_IDS['Llama-3-8B']}"
    assert model_note([mixed], ["Llama-3.3-70B", "Llama-3-8B"]) == ""
    assert "does not name" in model_note(["smollm2"], None)


def test_markdown_and_csv_carry_every_line() -> None:
    table = k_beside([KPoint("tiny", "strong", "2c1t", "all", 150, 0.5, 0.1)])
    text = beside_markdown(table)
    assert "| 2c1t | all | paper | Llama-3-8B | 8.9 | 21.1 | 31.2 | 33.1 | 33.4 | 31.3 |" in text
    assert "| 2c1t | all | **this run** | tiny, strong | – | – | – | 50.0 | – | – |" in text
    assert "`tab:app_k_ablation`" in text
    records = list(csv.DictReader(io.StringIO(beside_csv([table]))))
    assert [r["source"] for r in records] == [PAPER, RUN]
    assert records[1]["K=150"] == "50.0" and records[1]["K=10"] == ""


# -- the shipped small run through `rrdemo report` -------------------------------------------------
@pytest.fixture(scope="module")
def small_report():
    return build_report(read_run(SMALL_RUN))


def test_report_sets_the_small_run_beside_the_paper(small_report) -> None:
    files = small_report.files
    beside = files["paper_beside.md"]
    assert "## The paper beside this run" in files["report.md"]
    assert beside in files["report.md"]
    # the run's own lines are the numbers of its main table and final-speaker table
    main = list(csv.DictReader(io.StringIO(files["main_table.csv"])))
    for dataset in ("gsm8k", "logic3"):
        maj, rr = (
            float(
                next(
                    r
                    for r in main
                    if (r["dataset"], r["config"], r["method"]) == (dataset, "3c2t", m)
                )["accuracy"]
            )
            for m in ("MAJ", "RRMaj")
        )
        line = f"| {dataset} | 3c2t | strong | **this run** | smollm2, K=32 | {100 * maj:.1f} | {100 * rr:.1f} | {100 * (rr - maj):+.1f} |"
        assert line in beside
    for line in main_lines("strong"):
        if line.dataset in ("gsm8k", "logic3"):
            assert (
                f"| {line.dataset} | 3c2t | strong | paper | {line.model} (K=100, M=5) | {line.maj[2]:.1f} | {line.rrmaj[2]:.1f} |"
                in beside
            )
    speaker = list(csv.DictReader(io.StringIO(files["final_speaker.csv"])))
    for r in speaker:
        assert (
            f"| {r['label']} | {float(r['rho']):.1f} | **this run** | smollm2, strong, K=32 | {100 * float(r['clean_acc']):.2f} | {r['clean_n']} |"
            in beside
        )
    assert (
        "| 3c2t | 0.6 | paper | Mistral-3.1-24B | 45.62 | 548 | 45.59 | 748 | +0.03 | 1.0000 |"
        in beside
    )
    # the model differs from the paper's, and the tables without a match say what to run
    assert "This run used smollm2, not the paper's" in beside
    assert "No setting of this run matches: the paper's table has 2c1t" in beside
    assert "no heterogeneous ensemble" in beside


def test_report_command_writes_the_paper_files(tmp_path, capsys) -> None:
    out = tmp_path / "report"
    assert cli_main(["report", str(SMALL_RUN), "--out", str(out), "--no-png"]) == 0
    listed = capsys.readouterr().out.split()
    assert str(out / "paper_beside.md") in listed and str(out / "paper_beside.csv") in listed
    records = list(csv.DictReader((out / "paper_beside.csv").open(encoding="utf-8")))
    tables = {r["table"] for r in records}
    assert tables == {"settings", "m_scaling", "m_scaling_3c2t", "final_speaker"}
    assert {r["source"] for r in records} == {PAPER, RUN}


def _hinted_plan(note: str):
    """The plan of the `rrdemo experiment` flags a table's no-match note suggests."""
    import argparse
    import re
    import shlex

    from rrdemo.cli.experiment import add_arguments, sweep_from_args
    from rrdemo.runs.spec import plan_sweep

    flags = re.search(r"`rrdemo experiment ([^`]+)`", note).group(1)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([*shlex.split(flags), "--out", "x.jsonl", "--n", "2"])
    return plan_sweep(sweep_from_args(args))


def test_the_k_ablation_hint_reproduces_the_papers_design() -> None:
    """N = M = 3, 2c1t, t mod N, and room for every agent's turn up to K = 500 (4,096 cap)."""
    plan = _hinted_plan(k_beside([]).note)
    configs = [c.config for c in plan.conditions]
    assert sorted({c.k for c in configs}) == [10, 30, 75, 150, 300, 500]
    assert {c.task.name for c in plan.conditions} == {"logic7", "logic3", "track7"}
    for config in configs:
        assert (config.label, config.n, config.resolved_m) == ("2c1t", 3, 3)
        assert config.order == "fixed" and config.max_tokens == 4096
        assert config.max_tokens >= 2 * config.n * config.k  # every agent writes at least twice


def test_the_m_scaling_hints_draw_m_up_to_40_from_pools_of_50() -> None:
    for table in (scaling_beside([]), scaling_3c2t_beside([])):
        plan = _hinted_plan(table.note)
        assert {c.config.resolved_m for c in plan.conditions} == {50}, table.name
        assert "M* = 50" in table.note
