"""The calibration report's words for a log: its label and how its answers were drawn."""

from __future__ import annotations

import pytest

from rrdemo.calibration.report import calibration_label, calibration_settings


@pytest.mark.parametrize(
    ("tasks", "label"),
    [
        (["gsm8k", "aqua"], "m: paper tasks"),
        (["arith2", "arith4"], "m: generated arithmetic (beyond the paper)"),
        (["arith2", "logic3", "demo"],
         "m: generated arithmetic (beyond the paper) and paper tasks and our tasks (not the paper's)"),
    ],
)  # fmt: skip
def test_a_log_is_labelled_by_its_models_and_the_kind_of_its_tasks(tasks, label) -> None:
    assert calibration_label({"settings": {"models": ["m"], "tasks": tasks}}) == label


def test_the_settings_sentence_names_l_sampling_and_the_split() -> None:
    settings = {"max_tokens": 512, "temperature": 0.7, "top_p": 0.95, "seed": 0}
    header = {"settings": {**settings, "n": 2, "split_seed": 1}, "split": {"aqua": ["a", "b"]}}
    text = calibration_settings(header)
    assert "L = 512, temperature 0.7, top-p 0.95, seed 0" in text
    assert "2 questions per task drawn with split seed 1 (aqua: 2)" in text


def test_a_calibration_under_way_says_so_and_its_selection_is_not_final(tmp_path) -> None:
    """A report of a half-run calibration once read "no cell qualifies" over cells that had not
    begun; it now counts what is in and calls its selection provisional."""
    from pathlib import Path

    from rrdemo.calibration.report import write_calibration_report

    whole = Path(__file__).resolve().parents[3] / "assets" / "calibration" / "qwen15b_arith.jsonl"
    lines = whole.read_text(encoding="utf-8").splitlines(keepends=True)
    done = write_calibration_report(whole, tmp_path / "whole", png=False).read_text()
    assert "Under way" not in done and "**Selection:**" in done
    part = tmp_path / "part.jsonl"
    part.write_text("".join(lines[:41]), encoding="utf-8")  # the header and 40 answers
    text = write_calibration_report(part, tmp_path / "part", png=False).read_text()
    planned = len(lines) - 1
    assert f"**Under way:** 40 of {planned} planned answers" in text
    assert "**Selection so far** (not final" in text and "**Selection:**" not in text


def test_a_point_looks_the_same_in_both_panels_and_its_style_is_its_marker() -> None:
    """The right panel once drew its points in the next colours of plotly's cycle, so a strong
    point there wore another colour than in the legend; each model x injection now has one colour
    in both panels and each style one marker, and a point is labelled by its task alone."""
    from pathlib import Path

    from rrdemo.calibration.log import read_calibration
    from rrdemo.calibration.report import calibration_figure
    from rrdemo.calibration.table import calibration_rows, cell_stats

    log = Path(__file__).resolve().parents[3] / "assets" / "calibration" / "qwen15b_styles.jsonl"
    fig = calibration_figure(calibration_rows(cell_stats(read_calibration(log))))
    looks: dict[str, set] = {}
    for trace in fig.data:
        assert trace.marker.color is not None
        looks.setdefault(trace.legendgroup, set()).add((trace.marker.color, trace.marker.symbol))
        assert not any("(" in label for label in trace.text)
    assert len(looks) == 4  # strong and moderate, direct and step-by-step
    assert all(len(look) == 1 for look in looks.values())  # the same in both panels
    colour = {group.split(", ")[1]: next(iter(look))[0] for group, look in looks.items()}
    symbol = {group.split(", ")[2]: next(iter(look))[1] for group, look in looks.items()}
    assert len(set(colour.values())) == 2 and len(set(symbol.values())) == 2
    assert all(sum(t.showlegend is not False for t in fig.data if t.legendgroup == g) == 1
               for g in looks)  # fmt: skip
