"""The one column declaration: BoardRow's fields, the ORM attributes they are read from, and the
CLI's table and JSON all follow `leaderboard.columns.COLUMNS`."""

from __future__ import annotations

import dataclasses
import json

import pytest

from leaderboard import cli, service
from leaderboard.columns import CLI_COLUMNS, COLUMNS, STORED_COLUMNS, BoardRow
from leaderboard.orm import Base
from tests.support.samples import board_row, paper_row_count


def test_board_rows_have_a_field_per_stored_column_and_the_derived_ones() -> None:
    assert [f.name for f in dataclasses.fields(BoardRow)] == [c.name for c in STORED_COLUMNS]
    assert len({c.name for c in COLUMNS}) == len(COLUMNS)
    row = board_row("org/a", 3, 2, 0.25, 0.5)
    derived = {c.name: c.value(row) for c in COLUMNS if c.stored is None}
    assert derived == {
        "dataset_label": "gsm8k",
        "config": "3c2t",
        "rho": 0.6,
        "delta": 0.25,
        "standing": "current",
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.model = "org/b"


def test_every_stored_column_is_a_column_of_the_orm_tables() -> None:
    for column in STORED_COLUMNS:
        table, attribute = str(column.stored).split(".")
        assert attribute in Base.metadata.tables[table].columns, column.name


def test_the_cli_lists_the_declared_columns(lb_env: str, capsys: pytest.CaptureFixture) -> None:
    assert cli.main(["list", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == paper_row_count() and all(
        list(r) == [c.name for c in COLUMNS] for r in rows
    )
    assert cli.main(["list", "--format", "table"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert header.split() == [c.name for c in CLI_COLUMNS]


def test_board_rows_come_back_from_the_database_with_every_column(factory) -> None:
    with factory() as session:
        rows = service.board_rows(session)
    assert len(rows) == paper_row_count() and all(isinstance(r, BoardRow) for r in rows)
    first = rows[0]
    assert (first.source, first.status, first.submission_id, first.config_hash) == (
        "paper", "approved", 1, "paper-moderate"
    )  # fmt: skip
