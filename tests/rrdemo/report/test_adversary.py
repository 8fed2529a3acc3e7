"""MAJ vs RRMaj per adversary strategy: which strategy the other analyses read, and the main table
computed and printed per strategy (hand-built outcomes whose right answers follow from the scenario)."""

from __future__ import annotations

import csv
import io
from dataclasses import replace

from rrdemo.report.adversary import (
    adversary_table_csv,
    adversary_table_md,
    main_table_by_adversary,
    primary_outcomes,
    strategies,
)
from rrdemo.report.render import ci_text
from rrdemo.report.tables import main_table
from tests.support.outcomes import trap

CONFIGS = (0, 2, 3, 5)  # corrupted agents of N = 5: ceiling, two mixed configs, floor


def _outcomes(adversary: str, rr_right: int) -> list:
    """The consensus trap under one strategy; RR right `rr_right` times out of M* = 5."""
    return [
        replace(o, adversary=adversary, condition=f"{o.condition}:{adversary}")
        for c in CONFIGS
        for o in trap(c, questions=4, rr_right=rr_right)
    ]


STATIC = _outcomes("static", 5)  # RR rescues every question
LAST_WORD = _outcomes("last-word", 1)  # RR fails every question


def test_static_comes_first_then_the_others_by_name():
    assert strategies(LAST_WORD + _outcomes("contextual", 5) + STATIC) == [
        "static",
        "contextual",
        "last-word",
    ]
    assert strategies(LAST_WORD + _outcomes("contextual", 5)) == ["contextual", "last-word"]


def test_the_other_analyses_read_one_strategy():
    assert primary_outcomes(LAST_WORD + STATIC) == STATIC
    assert primary_outcomes(LAST_WORD) is LAST_WORD  # one strategy: all of it
    contextual = _outcomes("contextual", 5)
    assert primary_outcomes(LAST_WORD + contextual) == contextual


def test_each_strategy_gets_the_main_table_of_its_own_conditions():
    pairs = main_table_by_adversary(STATIC + LAST_WORD)
    assert [name for name, _ in pairs] == ["static", "last-word"]
    for (_, row), outcomes in zip(pairs, (STATIC, LAST_WORD), strict=True):
        (alone,) = main_table(outcomes)
        assert [(c.label, c.maj.mean, c.rrmaj.mean) for c in row.cells] == [
            (c.label, c.maj.mean, c.rrmaj.mean) for c in alone.cells
        ]
    static, last_word = (row for _, row in pairs)
    assert all(c.rrmaj.mean == 1.0 for c in static.cells)
    assert all(c.rrmaj.mean == 0.0 for c in last_word.cells)


def test_the_markdown_puts_the_strategies_of_one_config_next_to_each_other():
    pairs = main_table_by_adversary(STATIC + LAST_WORD)
    lines = adversary_table_md(pairs).splitlines()[2:]
    cells = {(name, cell.label): cell for name, row in pairs for cell in row.cells}
    assert len(lines) == len(cells)
    shown = [[part.strip() for part in line.strip("|").split("|")] for line in lines]
    assert [(s[4], s[5]) for s in shown] == [
        (label, name) for label in ("2c3t", "3c2t") for name in ("static", "last-word")
    ]
    for s in shown:
        cell = cells[(s[5], s[4])]
        assert s[6:] == [ci_text(cell.maj), ci_text(cell.rrmaj), ci_text(cell.delta, signed=True)]


def test_the_csv_has_maj_rrmaj_and_delta_per_strategy_and_config_in_fractions():
    pairs = main_table_by_adversary(STATIC + LAST_WORD)
    records = list(csv.DictReader(io.StringIO(adversary_table_csv(pairs))))
    cells = {(name, cell.label): cell for name, row in pairs for cell in row.cells}
    assert len(records) == 3 * len(cells)
    for r in records:
        cell = cells[(r["adversary"], r["config"])]
        estimate = {"MAJ": cell.maj, "RRMaj": cell.rrmaj, "Delta": cell.delta}[r["method"]]
        assert float(r["mean"]) == estimate.mean and float(r["lo"]) == estimate.lo
        assert int(r["n_questions"]) == estimate.n_questions == 4
