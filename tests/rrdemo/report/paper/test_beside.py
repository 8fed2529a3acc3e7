"""One paper table beside a run's numbers (`BesideTable`, its notes, markdown and CSV), and the
paper beside the shipped small real run (assets/experiment_small.jsonl) through `rrdemo report`."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from rrdemo.cli import main as cli_main
from rrdemo.report.paper import tables as paper
from rrdemo.report.paper.beside import PAPER, RUN, beside_csv, beside_markdown, model_note
from rrdemo.report.paper.main_tables import main_lines
from rrdemo.report.paper.match import k_beside
from rrdemo.report.tables import KPoint
from rrdemo.report.write import build_report
from rrdemo.runs.log import read_run

SMALL_RUN = Path(__file__).resolve().parents[4] / "assets" / "experiment_small.jsonl"


def test_model_note_is_empty_only_for_the_papers_own_models() -> None:
    assert model_note(["smollm2"], ["Llama-3.3-70B"]).startswith("This run used smollm2")
    assert model_note([paper.MODEL_IDS["Llama-3.3-70B"]], ["Llama-3.3-70B"]) == ""
    mixed = f"{paper.MODEL_IDS['Llama-3.3-70B']}*,{paper.MODEL_IDS['Llama-3-8B']}"
    assert model_note([mixed], ["Llama-3.3-70B", "Llama-3-8B"]) == ""
    assert "does not name" in model_note(["smollm2"], None)


def test_a_served_paper_model_counts_as_the_papers() -> None:
    served = {"llama70b": paper.MODEL_IDS["Llama-3.3-70B"]}
    assert model_note(["llama70b"], ["Llama-3.3-70B"], served) == ""
    assert model_note(["llama70b"], ["Llama-3.3-70B"]).startswith("This run used llama70b")


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
