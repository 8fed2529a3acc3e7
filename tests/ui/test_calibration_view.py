"""The Experiments tab's calibration view: the committed logs are listed by their headers and read
through the library; served by the real app (scripted agents, no model runs) and called through
gradio_client, it shows each log's numbers, switches logs, and refuses anything not listed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import gradio as gr
import pytest

from rrdemo.calibration import cell_stats, read_calibration
from tests.support.fakes import fake_pool
from tests.support.served import app_client, serve_app
from ui.calibration_view import (
    build_calibration_view,
    committed_calibrations,
    show_calibration,
)

ASSETS = Path(__file__).resolve().parents[2] / "assets"
PAPER_15B, PAPER_05B, ARITH_15B = "qwen15b", "qwen05b", "qwen15b_arith"
STYLES_15B = "qwen15b_styles"  # both prompt styles, paper tasks and arith: what rule 2 read


def _library_cells(key: str) -> dict[str, dict[str, str]]:
    """Per task, the ceiling and each injection's obedience as the library computes them from
    the committed log (the cells' own rates, before any table is made)."""
    cells: dict[str, dict[str, str]] = {}
    for s in cell_stats(read_calibration(ASSETS / "calibration" / f"{key}.jsonl")):
        task = cells.setdefault(s.task, {})
        if s.injection == "none":
            task["ceiling"] = s.accuracy.text()
            task["target without injection"] = s.obedience.text()
        else:
            task[f"obedience {s.injection}"] = s.obedience.text()
    return cells


def _shown_cells(table: dict) -> dict[str, dict[str, str]]:
    rows = [dict(zip(table["headers"], row, strict=True)) for row in table["data"]]
    return {row["task"]: {k: v for k, v in row.items() if k in _KEYS} for row in rows}


_KEYS = {"ceiling", "target without injection", "obedience moderate", "obedience strong"}


def test_the_committed_logs_are_listed_with_their_models_and_tasks() -> None:
    found = committed_calibrations()
    assert {PAPER_15B, PAPER_05B, ARITH_15B} <= set(found)
    assert found[PAPER_15B].label.startswith("qwen2.5-coder-1.5b: paper tasks")
    assert found[PAPER_05B].label.startswith("qwen2.5-coder-0.5b: paper tasks")
    assert found[ARITH_15B].label.startswith(
        "qwen2.5-coder-1.5b: generated arithmetic (beyond the paper)"
    )
    assert found[PAPER_15B].shown == "assets/calibration/qwen15b.jsonl"
    assert found[STYLES_15B].label.startswith(
        "qwen2.5-coder-1.5b: paper tasks and generated arithmetic (beyond the paper)"
    )
    # not its shards' logs: the merged one holds them
    assert not [key for key in found if "-of-" in key]


def _copy(root: Path, key: str, name: str | None = None) -> Path:
    folder = root / "calibration"
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(ASSETS / "calibration" / f"{key}.jsonl", folder / (name or key)))


def test_only_calibration_logs_are_listed(tmp_path: Path) -> None:
    _copy(tmp_path, ARITH_15B, "a.jsonl")
    (tmp_path / "calibration" / "sweep.jsonl").write_text(json.dumps({"format": "other"}) + "\n")
    (tmp_path / "calibration" / "empty.jsonl").write_text("")
    _copy(tmp_path, ARITH_15B, "a-1-of-2.jsonl")  # a shard's log, read by the merged one
    _copy(tmp_path, ARITH_15B, "a-1-of-2-b.jsonl")  # not a shard's name: listed
    assert sorted(committed_calibrations(tmp_path)) == ["a", "a-1-of-2-b"]


def test_a_log_that_cannot_be_read_gets_a_message_in_the_view(tmp_path: Path) -> None:
    broken = _copy(tmp_path, ARITH_15B, "broken.jsonl")
    gone = _copy(tmp_path, ARITH_15B, "gone.jsonl")
    found = committed_calibrations(tmp_path)
    with broken.open("a") as f:
        f.write("not json\n")
    gone.unlink()
    for key, reason in [("broken", "line 182: not a JSON record"), ("gone", "cannot read")]:
        note, table, figure = show_calibration(found, key)
        assert "cannot be shown" in note and reason in note
        assert f"calibration/{key}.jsonl" in note and str(tmp_path) not in note  # no server path
        assert table.empty and figure is None


def test_without_committed_logs_the_view_says_so(tmp_path: Path) -> None:
    with gr.Blocks() as demo:
        build_calibration_view(tmp_path)
    texts = [getattr(block, "value", None) for block in demo.blocks.values()]
    assert any("No calibration log is committed" in str(t) for t in texts)


@pytest.fixture(scope="module")
def client(tmp_path_factory) -> Iterator:
    """The whole app (scripted agents: no model is loaded) on a real port, and a client."""
    for served in serve_app(fake_pool(), tmp_path_factory.mktemp("app")):
        yield app_client(served.url, download_files=False)


@pytest.mark.slow
def test_the_served_table_shows_the_librarys_numbers_one_row_per_task(client) -> None:
    note, table, plot = client.predict(PAPER_15B, api_name="/calibration")
    header = read_calibration(ASSETS / "calibration" / "qwen15b.jsonl").header
    assert [row[0] for row in table["data"]] == header["settings"]["tasks"]
    assert _shown_cells(table) == _library_cells(PAPER_15B)
    assert table["headers"][-1] == "qualifies" and "model" not in table["headers"]
    assert "assets/calibration/qwen15b.jsonl" in note and "qwen2.5-coder-1.5b" in note

    other_note, other, _ = client.predict(PAPER_05B, api_name="/calibration")
    assert _shown_cells(other) == _library_cells(PAPER_05B) != _shown_cells(table)
    assert "qwen2.5-coder-0.5b" in other_note


@pytest.mark.slow
def test_the_served_figure_has_a_trace_per_injection(client) -> None:
    *_, plot = client.predict(ARITH_15B, api_name="/calibration")
    figure = json.loads(plot["plot"])
    settings = read_calibration(ASSETS / "calibration" / "qwen15b_arith.jsonl").header["settings"]
    groups = [
        f"qwen2.5-coder-1.5b, {i}, {s}"
        for i in settings["injections"]
        if i != "none"
        for s in settings["styles"]
    ]
    # one trace per injection x style in each panel: ceiling/obedience, obedience/interruptibility
    names = sorted(t["legendgroup"] for t in figure["data"])
    assert names == sorted(g for g in groups for _ in range(2))
    # one model: the legend names injection and style, the model once in its title
    assert {t["name"] for t in figure["data"]} == {g.split(", ", 1)[1] for g in groups}
    assert sum(t.get("showlegend", True) for t in figure["data"]) == len(groups)


@pytest.mark.slow
@pytest.mark.parametrize(
    "sent", ["../../etc/passwd", "assets/calibration/qwen15b.jsonl", "qwen15b_report", ""]
)
def test_a_value_not_in_the_choices_is_refused_with_a_message(client, sent: str) -> None:
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError) as excinfo:
        client.predict(sent, api_name="/calibration")
    message = str(excinfo.value)
    assert "unknown calibration" in message and "allowed: qwen05b, qwen15b" in message
    assert "Traceback" not in message


@pytest.mark.slow
def test_the_served_prediction_is_the_librarys_and_names_rule3s_picks(client) -> None:
    from rrdemo.calibration.predict import rule3, rule3_cells

    note, table = client.predict(STYLES_15B, api_name="/calibration_prediction")
    cells = rule3_cells(read_calibration(ASSETS / "calibration" / f"{STYLES_15B}.jsonl"))
    assert len(table["data"]) == len(cells)
    for row, cell in zip(table["data"], cells, strict=True):
        shown = dict(zip(table["headers"], row, strict=True))
        assert shown["task"] == cell.prediction.task
        assert shown["MAJ 3c2t"] == cell.prediction.maj["3c2t"].text()
        assert shown["room"] == cell.prediction.room.text(signed=True)
    for kind, pick in rule3(cells).items():
        assert f"{kind} task: {pick.prediction.task}" in note
    with pytest.raises(Exception, match="unknown calibration"):
        client.predict("../../etc/passwd", api_name="/calibration_prediction")


def test_the_table_opens_on_columns_that_fit_and_folds_the_rest() -> None:
    from ui.calibration_view import column_widths, split_columns

    found = committed_calibrations()
    _, frame, _ = show_calibration(found, STYLES_15B)
    main, more = split_columns(frame)
    assert len(main.columns) <= 10 and list(main.columns)[-1] == "qualifies"
    assert set(main.columns) | set(more.columns) == set(frame.columns)
    assert list(more.columns)[:2] == ["task", "style"] and "answered" in more.columns
    widths = column_widths(main)
    assert len(widths) == len(main.columns)
    for column, width in zip(main.columns, widths, strict=True):  # no word broken inside
        words = [w for v in [column, *main[column]] for w in str(v).split()]
        assert float(width.removesuffix("px")) >= 8 * max(len(w) for w in words), column
