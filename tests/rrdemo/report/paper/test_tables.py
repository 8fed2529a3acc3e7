"""rrdemo.report.paper.tables against the paper's LaTeX (tests/data/consensus_trap.tex), cell by cell.

Each test reads one table with the independent tabular reader (tests/support/latex_tables.py), renders the
data module's records the way the paper prints them and compares every cell, every row, in order.
"""

from __future__ import annotations

import re

import pytest

from rrdemo.report.paper import tables as paper
from tests.support.latex_tables import PAPER_TEX, clean_cell, read_paper, table_rows


@pytest.fixture(scope="module")
def tex() -> str:
    return read_paper()


def _f(x: float, digits: int = 1) -> str:
    return f"{x:.{digits}f}"


def _s(x: float, digits: int = 1) -> str:
    return f"{x:+.{digits}f}"


def test_the_latex_copy_is_the_papers_source() -> None:
    text = PAPER_TEX.read_text(encoding="utf-8")
    assert text.startswith("\\documentclass") and text.rstrip().endswith("\\end{document}")
    for label in paper.LABELS.values():
        assert text.count(f"\\label{{{label}}}") == 1, label


def test_m_scaling_averages(tex: str) -> None:
    rows = table_rows(tex, paper.LABELS["scaling"])
    assert rows[0] == ["Bias", "Method", *[f"M={m}" for m in paper.SCALING_MS], "Δ(40-1)"]
    printed: dict[tuple[str, str, str], list[str]] = {}
    config = strength = ""
    for row in rows[1:]:
        if len(row) == 1:  # "Critical Corruption (3c2t): ..."
            config = re.search(r"\((\dc\dt)\)", row[0]).group(1)
            continue
        strength = row[0].lower() or strength
        method = {"Δ(RRMaj-MAJ)": "Delta"}.get(row[1], row[1])
        printed[(strength, config, method)] = row[2:]
    ours = {}
    for r in paper.SCALING:
        if r.std is None:
            cells = [_s(m) for m in r.mean]
        else:
            cells = [f"{_f(m)}±{_f(s)}" for m, s in zip(r.mean, r.std, strict=True)]
        ours[(r.strength, r.config, r.method)] = cells + ["-" if r.gain is None else _s(r.gain)]
    assert len(printed) == 12
    assert ours == printed


def test_m_scaling_per_dataset_3c2t(tex: str) -> None:
    rows = table_rows(tex, paper.LABELS["scaling_3c2t"])
    assert rows[:2] == [["Dataset", "MAJ", "RRMaj"], ["", "M=1", "M=40", "M=1", "M=40"]]
    assert "3c2t" in tex[tex.index("Detailed Dataset Breakdown") :][:80]
    ours = [
        [
            paper.PAPER_DATASET_NAMES[r.dataset],
            *(_f(v) for v in (r.maj_m1, r.maj_m40, r.rrmaj_m1, r.rrmaj_m40)),
        ]
        for r in paper.SCALING_3C2T
    ]
    assert ours == rows[2:]


def test_final_speaker(tex: str) -> None:
    rows = table_rows(tex, paper.LABELS["final_speaker"])
    models = rows[0][1:]
    assert models == ["Llama-4-Scout-17B", "Mistral-3.1-24B"]
    assert rows[1][1:5] == ["Clean-Last", "Corrupt-Last", "Δ(%)", "p-value"]
    printed = {}
    for row in rows[2:]:
        for i, model in enumerate(models):
            printed[(model, row[0])] = row[1 + 4 * i : 5 + 4 * i]
    ours = {
        (r.model, f"{r.config} ({r.rho})"): [
            f"{_f(r.clean_acc, 2)}% (n={r.clean_n})",
            f"{_f(r.corrupt_acc, 2)}% (n={r.corrupt_n})",
            _s(r.delta, 2),
            _f(r.p_value, 4),
        ]
        for r in paper.FINAL_SPEAKER
    }
    assert len(printed) == 8
    assert ours == printed
    assert {r.model for r in paper.FINAL_SPEAKER} <= set(paper.MODEL_IDS)


@pytest.mark.parametrize("key", ["hetero_n3", "hetero_n5", "hetero_diverse"])
def test_heterogeneous_ensembles(tex: str, key: str) -> None:
    label = paper.LABELS[key]
    rows = table_rows(tex, label)
    assert rows[0] == ["Corruption Pattern", "MAJ", "RRMaj", "Gain (Δ)"]
    ours: list[list[str]] = []
    for name, ensemble in paper.HETERO_ENSEMBLES.items():
        if ensemble.label != label:
            continue
        ours.append([f"{name} ({ensemble.description})"])
        for r in (r for r in paper.HETERO if r.ensemble == name):
            ours.append(
                [
                    f"{r.config} ({r.pattern})",
                    f"{_f(r.maj)}%",
                    "--" if r.rrmaj is None else f"{_f(r.rrmaj)}%",
                    "--" if r.gain is None else _s(r.gain),
                ]
            )
    assert ours == rows[1:]


def test_heterogeneous_configs_add_up() -> None:
    for r in paper.HETERO:
        c, t = map(int, r.config[:-1].split("c"))
        assert c + t == r.n == paper.HETERO_ENSEMBLES[r.ensemble].n
        assert (r.rrmaj is None) == (c == 0) == (r.gain is None)


def test_k_ablation(tex: str) -> None:
    rows = table_rows(tex, paper.LABELS["k_ablation"])
    assert rows[0] == ["K (tokens)", "Logic7", "Logic3", "Track7", "AVG"]
    names = {"all": "AVG"}
    assert [names.get(d, paper.PAPER_DATASET_NAMES[d]) for d in paper.K_ABLATION_DATASETS] == (
        rows[0][1:]
    )
    by_k: dict[int, list[str]] = {}
    for r in paper.K_ABLATION:
        by_k.setdefault(r.k, []).append(f"{_f(r.rrmaj)}%")
    assert [[str(k), *cells] for k, cells in by_k.items()] == rows[1:]
    caption = tex[tex.index("Ablation of token chunk size") :][:120]
    assert paper.K_ABLATION_MODEL in caption and "N=M=3" in caption.replace(" ", "")


def test_the_reader_turns_latex_markup_into_text() -> None:
    # the reader must not hide differences: markup goes, content stays
    assert clean_cell(r"\textbf{\textit{$46.2_{\pm2.6}$}}") == "46.2±2.6"
    assert clean_cell(r"\multicolumn{4}{l}{\textit{\textbf{N3\_x (2$\times$70B)}}}") == (
        "N3_x (2×70B)"
    )
    assert clean_cell(r"81.12\% ($n$=1176)") == "81.12% (n=1176)"
    assert clean_cell(r" \textbf{+15.4} ") == "+15.4"
