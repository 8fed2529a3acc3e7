"""The seeded paper tables: stored numbers re-derive the printed Delta column, match the LaTeX
source cell by cell, and reproduce the worked example of appendix C through the ranking code."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from leaderboard import service
from leaderboard.db import run_transaction
from leaderboard.paper_seed import DATASET_IDS, MODEL_IDS, paper_lines
from leaderboard.ranking import filter_rows, pooled_lines, rank_models, score_model
from tests.support.samples import paper_row_count

CONFIGS = ["1c4t", "2c3t", "3c2t", "4c1t"]
# Printed Deltas that differ from RRMaj - MAJ by 0.1 (the paper rounds each column on its own).
ROUNDING_CASES = {
    ("strong", "Llama-4-Scout-17B", "Logic7", "2c3t"),
    ("strong", "Llama-4-Scout-17B", "Logic7", "3c2t"),
    ("strong", "Qwen2.5-32B", "GSM8K", "1c4t"),
    ("strong", "Qwen2.5-32B", "GSM8K", "2c3t"),
    ("strong", "Qwen2.5-32B", "Track-7", "3c2t"),
    ("strong", "Qwen2.5-32B", "Logic-3", "1c4t"),
    ("strong", "Qwen3-30B", "Logic7", "2c3t"),
}


def _stored(factory):
    rows = run_transaction(factory, service.board_rows)
    return {(r.strength, r.model, r.dataset, r.label): r for r in rows if r.source == "paper"}


def test_stored_numbers_re_derive_the_printed_delta(factory) -> None:
    stored = _stored(factory)
    checked, off_by_rounding = 0, set()
    for strength in ("moderate", "strong"):
        for line in paper_lines(strength):
            for i, config in enumerate(CONFIGS):
                key = (strength, MODEL_IDS[line.paper_model], DATASET_IDS[line.paper_dataset])
                row = stored[(*key, config)]
                derived = Decimal(str(round(100 * row.rrmaj_accuracy, 6))) - Decimal(
                    str(round(100 * row.maj_accuracy, 6))
                )
                printed = Decimal(line.delta[i])
                assert abs(derived - printed) <= Decimal("0.1"), (key, config, derived, printed)
                if derived != printed:
                    off_by_rounding.add((strength, line.paper_model, line.paper_dataset, config))
                checked += 1
    assert checked == 2 * 5 * 6 * 4
    # Any new mismatch (a transcription typo in MAJ, RRMaj or Delta) shows up here.
    assert off_by_rounding == ROUNDING_CASES


def _parse_tex(tex: str, label: str) -> dict[tuple[str, str], list[str]]:
    """Table lines of one LaTeX table: (paper model, dataset) -> the 14 numeric cells."""
    start = tex.index(f"\\label{{{label}}}")
    body = tex[start : tex.index("\\end{tabular}", start)]
    out: dict[tuple[str, str], list[str]] = {}
    model = None
    for line in body.splitlines():
        found = re.search(r"Model: ([^}]+)\}", line)
        if found:
            model = found.group(1).strip()
            continue
        cells = [
            re.sub(r"\\textbf\{(.*?)\}", r"\1", c).strip() for c in line.split("\\\\")[0].split("&")
        ]
        if model and len(cells) == 15 and re.fullmatch(r"[+-]?\d+\.\d", cells[1]):
            out[(model, cells[0])] = cells[1:]
    return out


def test_stored_numbers_match_the_latex_source(factory, paper_tex: str) -> None:
    stored = _stored(factory)
    labels = {"moderate": "tab:moderate_bias_summary", "strong": "tab:main_results_must_bias"}
    compared = 0
    for strength, label in labels.items():
        table = _parse_tex(paper_tex, label)
        assert len(table) == 30
        for (paper_model, paper_dataset), cells in table.items():
            key = (strength, MODEL_IDS[paper_model], DATASET_IDS[paper_dataset])
            ceiling, floor = stored[(*key, "0c5t")], stored[(*key, "5c0t")]
            assert 100 * ceiling.maj_accuracy == pytest.approx(float(cells[0]), abs=1e-9)
            assert 100 * ceiling.rrmaj_accuracy == pytest.approx(float(cells[0]), abs=1e-9)
            assert 100 * floor.maj_accuracy == pytest.approx(float(cells[13]), abs=1e-9)
            for i, config in enumerate(CONFIGS):
                row = stored[(*key, config)]
                assert 100 * row.maj_accuracy == pytest.approx(float(cells[1 + 3 * i]), abs=1e-9)
                assert 100 * row.rrmaj_accuracy == pytest.approx(float(cells[2 + 3 * i]), abs=1e-9)
                compared += 2
            assert all(r.n_agents == 5 and r.k == 100 and r.m == 5 for r in (ceiling, floor))
    assert compared == 2 * 30 * 8


def test_seed_settings_are_the_papers(factory) -> None:
    rows = [r for r in _stored(factory).values()]
    assert len(rows) == paper_row_count()
    assert {(r.n_agents, r.k, r.m, r.n_questions) for r in rows} == {(5, 100, 5, 128)}
    assert {r.status for r in rows} == {"approved"}
    assert {r.dataset for r in rows} == {"gsm8k", "aqua", "math500", "logic3", "logic7", "track7"}


def test_appendix_c_worked_example_through_the_ranking(factory) -> None:
    # "Llama-4-Scout-17B incurs a negligible average tax of just -1.55% on GSM8K during minority
    # corruption, but achieves a staggering +49.1% average rescue gain during majority corruption."
    rows = filter_rows(
        run_transaction(factory, service.board_rows), strength="strong", dataset="gsm8k"
    )
    score = score_model(MODEL_IDS["Llama-4-Scout-17B"], rows)
    assert 100 * score.robustness_tax == pytest.approx(-1.55, abs=1e-9)
    assert 100 * score.mean_gain == pytest.approx(49.1, abs=1e-9)
    # Main text: "on Track7 (3c2t), RRMaj rescues Llama-3.3-70B from a dismal 0.8% to 89.1%".
    stored = _stored(factory)
    track = stored[("moderate", MODEL_IDS["Llama-3.3-70B"], "track7", "3c2t")]
    assert (track.maj_accuracy, track.rrmaj_accuracy) == (0.008, 0.891)


def test_moderate_ranking_has_every_paper_model(factory) -> None:
    rows = filter_rows(run_transaction(factory, service.board_rows), strength="moderate")
    scores = rank_models(rows)
    assert {s.model for s in scores} == set(MODEL_IDS.values())
    assert all(s.n_majority_rows == 12 and s.n_minority_rows == 12 for s in scores)
    # the paper prints accuracies only: RRMaj's interval is what its 128 questions allow (a
    # binomial); its Delta scores are the paper's means over rows, with no interval (the pairing
    # of its questions is not known), and it has no pooled line (no paired counts)
    assert all(s.intervals == "stated n" and s.rrmaj_majority_ci is not None for s in scores)
    assert all(s.mean_gain is not None and s.asymmetric_yield is not None for s in scores)
    assert pooled_lines(rows) == []
