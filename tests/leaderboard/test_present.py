"""The presentation helpers: escaping, CSV formula defusing, chart traces, and the board table
and the CSV built from the one column declaration (`leaderboard.columns`)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from leaderboard import present
from leaderboard.columns import BOARD_COLUMNS, CSV_COLUMNS
from tests.support.samples import board_row as row

FORMULAS = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd"]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_cell_a_spreadsheet_would_run_is_written_as_text(tmp_path: Path, text: str) -> None:
    rows = [row("org/a", 3, 2, 0.2, 0.6, submitter=text, notes=text)]
    path = present.write_csv(rows, tmp_path / "board.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        record = dict(zip(*csv.reader(handle), strict=True))
    assert record["submitter"] == "'" + text and record["notes"] == "'" + text


def test_plain_text_and_numbers_are_written_as_they_are(tmp_path: Path) -> None:
    rows = [row("org/a", 3, 2, 0.2, 0.6, submitter="a-b = c", notes="")]
    path = present.write_csv(rows, tmp_path / "board.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        record = dict(zip(*csv.reader(handle), strict=True))
    assert record["submitter"] == "a-b = c" and record["model"] == "org/a"
    assert float(record["rrmaj_accuracy"]) == 0.6


def test_the_ranking_csv_defuses_a_model_named_like_a_formula(tmp_path: Path) -> None:
    from leaderboard.ranking import rank_models

    rows = [row("=cmd|' /C calc'!A0", c, 5 - c, 0.5, 0.6) for c in range(6)]
    path = present.write_ranking_csv(rank_models(rows), tmp_path / "ranking.csv")
    with path.open(encoding="utf-8", newline="") as handle:
        records = list(csv.DictReader(handle))
    assert [r["model"] for r in records] == ["'=cmd|' /C calc'!A0"]


def test_the_board_table_and_the_csv_agree_column_by_column(tmp_path: Path) -> None:
    named = {"submitter": "x & y", "model_revision": "v1", "config_hash": "h"}
    stated = {"prompt_style": "step-by-step", "eos_policy": "pass"}
    rows = [
        row("org/<a>", 3, 2, 0.2, 0.6, **named, **stated),
        row("org/b", 0, 5, None, 0.9, max_tokens=512),
    ]
    frame = present.board_frame(rows)
    assert list(frame.columns) == [c.label for c in BOARD_COLUMNS]
    path = present.write_csv(rows, tmp_path / "out.csv")
    with path.open(encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        records = [dict(zip(header, line, strict=True)) for line in reader]
    assert header == [c.name for c in CSV_COLUMNS]
    assert {c.name for c in BOARD_COLUMNS} - set(header) == {"config"}  # derived: c and t are there
    checked = 0
    for i, record in enumerate(records):
        for column in BOARD_COLUMNS:
            shown = frame.loc[i, column.label]
            if column.name == "config":
                assert shown == f"{record['n_corrupted']}c{record['n_honest']}t"
            elif column.display == "estimator":  # named in words
                assert shown == {"decisions": "run's decisions"}[record[column.name]]
            elif column.display == "stated":  # a setting the row may not state: "-"
                assert shown == (record[column.name] or "-")
            elif record[column.name] == "":
                assert shown is None or shown != shown  # None, or NaN in a float column
            elif column.display == "percent":
                assert shown == pytest.approx(round(100 * float(record[column.name]), 1))
            elif column.display == "ratio":
                assert shown == pytest.approx(round(float(record[column.name]), 3))
            elif column.display == "text":
                assert shown == record[column.name]
            else:
                assert str(shown) == record[column.name]
            checked += 1
    assert checked == 2 * len(BOARD_COLUMNS)


def test_the_ranking_text_shows_a_dash_where_the_rows_give_no_number() -> None:
    from leaderboard.ranking import rank_models

    # one majority-corrupted row: no minority row, so no robustness tax and no yield
    scores = rank_models([row("solo", 3, 2, 0.2, 0.6)])
    assert scores[0].robustness_tax is None
    text = present.ranking_text(scores)
    assert "None" not in text and "nan" not in text.lower()
    family, header, line = text.splitlines()
    assert family == "Ranked on the paper's tasks:"
    cells = dict(zip(present.RANKING_COLUMNS, line.split(), strict=False))
    assert cells["rank"] == "1" and cells["model"] == "solo"
    assert line.split().count("-") >= 3  # tax, yield and its interval
