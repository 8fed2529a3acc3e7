"""The paper's main tables (moderate and strong injection) against its LaTeX, cell by cell, and
the arithmetic the printed numbers must satisfy."""

from __future__ import annotations

import pytest

from rrdemo.report.paper import tables as paper
from rrdemo.report.paper.main_tables import DATASET_IDS, MAIN_CONFIGS, MAIN_LABELS, main_lines
from rrdemo.tasks import TASK_NAMES
from tests.support.latex_tables import read_paper, table_rows

STRENGTHS = tuple(MAIN_LABELS)


@pytest.fixture(scope="module")
def tex() -> str:
    return read_paper()


@pytest.mark.parametrize("strength", STRENGTHS)
def test_main_tables(tex: str, strength: str) -> None:
    rows = table_rows(tex, MAIN_LABELS[strength])
    printed = []
    model = ""
    for row in rows:
        if len(row) == 1 and row[0].startswith("Model: "):
            model = row[0].removeprefix("Model: ")
        elif len(row) == 15 and row[0] not in ("", "Dataset"):
            printed.append((model, row[0], [float(c) for c in row[1:]]))
    ours = [
        (
            line.model,
            line.printed_dataset,
            [line.ceiling]
            + [v for i in range(4) for v in (line.maj[i], line.rrmaj[i], line.delta[i])]
            + [line.floor],
        )
        for line in main_lines(strength)
    ]
    assert printed  # the reader found the table
    assert ours == printed
    assert {line.model for line in main_lines(strength)} <= set(paper.MODEL_IDS)
    assert {line.dataset for line in main_lines(strength)} == set(TASK_NAMES)


@pytest.mark.parametrize("strength", STRENGTHS)
def test_each_model_has_one_line_per_dataset(strength: str) -> None:
    lines = main_lines(strength)
    models = {line.model for line in lines}
    for model in models:
        assert sorted(line.dataset for line in lines if line.model == model) == sorted(TASK_NAMES)
    assert len(lines) == len(models) * len(TASK_NAMES)
    assert set(DATASET_IDS.values()) == set(TASK_NAMES)


@pytest.mark.parametrize("strength", STRENGTHS)
def test_each_printed_delta_is_rrmaj_minus_maj_up_to_rounding(strength: str) -> None:
    """The paper subtracts unrounded accuracies: a printed Delta may differ by one last digit."""
    for line in main_lines(strength):
        for i, config in enumerate(MAIN_CONFIGS):
            gap = line.rrmaj[i] - line.maj[i]
            assert abs(line.delta[i] - gap) <= 0.1 + 1e-9, (line.model, line.dataset, config)
        assert all(0 <= v <= 100 for v in (line.ceiling, line.floor, *line.maj, *line.rrmaj))
