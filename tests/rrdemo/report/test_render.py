"""rrdemo.report.render: the report's markdown and CSV, on the consensus-trap rows of tests/support."""

from __future__ import annotations

import csv
import io
import math

from rrdemo.report.render import csv_text, main_table_csv, main_table_md, pct, yield_tables
from rrdemo.report.tables import YieldRow, main_table
from tests.support.outcomes import trap

ROWS = main_table([r for c in (0, 1, 3, 5) for r in trap(c)])


def test_cells_are_percent_with_one_decimal_signed_when_asked_and_a_dash_for_nothing():
    assert pct(0.875) == "87.5" and pct(0.25, signed=True) == "+25.0"
    assert pct(-0.1, signed=True) == "-10.0"
    assert pct(math.nan) == "–" and pct(None) == "–"


def test_the_main_table_is_the_papers_layout_with_rrmaj_in_bold_where_it_wins():
    md = main_table_md(ROWS)
    assert md.startswith(
        "### Pool-draw estimate (mean over 50 pool draws, not the run's decisions): "
        "strength strong, N = 5, K = 4, L = 64, M = 5\n"
    )
    header, rule, ensemble, line = md.splitlines()[2:6]
    assert header == (
        "| Dataset | Ceiling (0c5t) | 1c4t MAJ | 1c4t RRMaj | 1c4t Δ | "
        "3c2t MAJ | 3c2t RRMaj | 3c2t Δ | Floor (5c0t) |"
    )
    assert ensemble.startswith("| **m** |")
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[0] == "logic3"
    assert cells[1].startswith("100.0 [")  # the ceiling's MAJ
    assert cells[5] == "0.0 [0.0, 0.0]"  # 3c2t: MAJ falls to the corrupted majority
    assert cells[6] == "**100.0 [100.0, 100.0]**"  # RRMaj wins: bold
    assert cells[7] == "**+100.0 [+100.0, +100.0]**"
    assert cells[8].startswith("0.0 [")  # the floor


def test_the_main_csv_has_one_line_per_setting_and_method_in_fractions():
    lines = list(csv.DictReader(io.StringIO(main_table_csv(ROWS))))
    assert len(lines) == 4 * 3  # ceiling, 1c4t, 3c2t, floor x MAJ, RRMaj, Delta
    majority = {r["method"]: r for r in lines if r["config"] == "3c2t"}
    assert majority["MAJ"]["accuracy"] == "0.0" and majority["RRMaj"]["accuracy"] == "1.0"
    assert majority["Delta"]["rho"] == "0.6" and majority["Delta"]["role"] == "config"
    assert {r["role"] for r in lines} == {"ceiling", "config", "floor"}


def test_csv_keeps_fractions_rounded_and_leaves_nan_empty():
    text = csv_text([{"a": 1 / 3, "b": math.nan, "c": "x"}])
    assert text == "a,b,c\n0.333333,,x\n"
    assert csv_text([]) == ""


def test_the_yield_table_shows_signed_means_with_how_many_settings_each_averages():
    rows = [YieldRow("m", "logic3", "strong", 4, -0.05, 2, 0.4, 1)]
    md, text = yield_tables(rows)
    assert md.splitlines()[2] == "| m | logic3 | strong | 4 | -5.0 (2) | +40.0 (1) |"
    assert text.splitlines()[0].startswith("ensemble,task,strength,k,safe_delta")
