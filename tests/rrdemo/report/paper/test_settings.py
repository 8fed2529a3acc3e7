"""The paper's per-setting lines (main tables, 3c2t breakdown, K ablation) and heterogeneous
ensembles beside a run's conditions."""

from __future__ import annotations

import pytest

from rrdemo.report.paper.beside import PAPER, RUN
from rrdemo.report.paper.main_tables import main_lines
from rrdemo.report.paper.settings import (
    SettingResult,
    hetero_beside,
    settings_beside,
    settings_from_main,
)
from rrdemo.report.tables import main_table
from tests.support.outcomes import trap


def _lines(table, source):
    return [r for r in table.rows if r.source == source]


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


def test_every_cell_of_the_main_table_is_a_setting():
    rows = main_table([r for c in (0, 1, 3, 5) for r in trap(c)])
    results = settings_from_main(rows)
    cells = [cell for row in rows for cell in (row.ceiling, *row.cells, row.floor)]
    assert (
        [r.label for r in results]
        == [cell.label for cell in cells]
        == [
            "0c5t",
            "1c4t",
            "3c2t",
            "5c0t",
        ]
    )
    for result, cell in zip(results, cells, strict=True):
        assert (result.maj, result.rrmaj) == (cell.maj.mean, cell.rrmaj.mean)
        assert (result.ensemble, result.task, result.n) == (rows[0].ensemble, rows[0].task, 5)
