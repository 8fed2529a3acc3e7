"""The committed calibrations, read-only: why the evidence run is on the cell it is on.

A section of the Experiments tab. A dropdown lists the calibration logs committed under
assets/calibration/ (found when the tab builds, by their headers); the chosen one is read through
`rrdemo.calibration` (`read_calibration`, `cell_stats`, `calibration_rows`) and shown as the
report's table (`calibration_table`) and plot (`calibration_figure`). The visitor picks a log by
its key, never by a path: a value that is not one of the listed keys is refused.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import gradio as gr
import pandas as pd
import plotly.graph_objects as go

from rrdemo.calibration.log import read_calibration, read_calibration_header
from rrdemo.calibration.report import (
    calibration_figure,
    calibration_label,
    calibration_settings,
)
from rrdemo.calibration.table import (
    calibration_note,
    calibration_rows,
    calibration_table,
    cell_stats,
)
from rrdemo.errors import RRError
from rrdemo.study.file import Study
from ui.errors import user_error

# Shown first: the calibration selection rule 2 read, both prompt styles on every task, 40
# questions per cell (docs/evidence.md).
DEFAULT_KEY = "qwen15b_styles"
# Columns the view leaves out when every row has the same value (said once above the table).
SAME_FOR_ALL = ("model", "style")

INTRO = """A rescue by RRMaj can only show where honest agents are mostly right alone and injected
agents mostly give the target. `rrdemo calibrate` measures both before any evidence run, one agent
per answer (no RR, no vote), for each model x task x injection; the evidence run then takes a
qualifying cell and only questions the calibration did not use (docs/evidence.md)."""


@dataclass(frozen=True)
class Calibration:
    """A committed calibration log as the view lists it."""

    key: str  # what the dropdown sends: the file's stem
    label: str
    path: Path
    shown: str  # the path shown to visitors, relative to the checkout


def committed_calibrations(root: Path | None = None) -> dict[str, Calibration]:
    """The calibration logs under `root`/calibration/*.jsonl (default: the checkout's assets/),
    by key; files whose first line is not a calibration header, and the shard logs a merged log
    holds, are not listed."""
    root = root or Path(__file__).resolve().parents[1] / "assets"
    found = {}
    for path in sorted((root / "calibration").glob("*.jsonl")):
        if Study.is_shard_log(path):
            continue  # its study's merged log is listed, and holds it
        try:
            header = read_calibration_header(path)
            label = calibration_label(header)
        except (RRError, KeyError, TypeError):
            continue
        shown = str(path.relative_to(root.parent))
        found[path.stem] = Calibration(path.stem, f"{label} · {path.name}", path, shown)
    return found


def _frame(header: list[str], body: list[list[str]]) -> pd.DataFrame:
    frame = pd.DataFrame(body, columns=header)
    same = [c for c in SAME_FOR_ALL if c in frame and frame[c].nunique() == 1]
    return frame.drop(columns=same)


def _listed(calibrations: dict[str, Calibration], key: object) -> Calibration:
    """The listed calibration `key`; anything else is refused (gr.Error naming the allowed keys)."""
    if not isinstance(key, str) or key not in calibrations:
        allowed = ", ".join(calibrations) or "none (no calibration log is committed)"
        refused = RRError(f"unknown calibration {str(key)[:80]!r}; allowed: {allowed}")
        raise user_error(refused, "calibration view")
    return calibrations[key]


def show_calibration(
    calibrations: dict[str, Calibration], key: object
) -> tuple[str, pd.DataFrame, go.Figure | None]:
    """The note, table and plot of the calibration `key`; a key not listed is refused (gr.Error),
    a log that cannot be read gets its reason in the note and an empty table."""
    chosen = _listed(calibrations, key)
    try:
        log = read_calibration(chosen.path)
        rows = calibration_rows(cell_stats(log))
        header, body = calibration_table(rows)
        figure = calibration_figure(rows)
        figure.layout.width = None  # the page's width, not the report PNG's
        wrap_titles(figure)
        settings = calibration_settings(log.header)
    except (RRError, KeyError, TypeError, ValueError) as exc:
        reason = str(exc).replace(str(chosen.path), chosen.shown)
        if not isinstance(exc, RRError):
            reason = f"{chosen.shown} is not a calibration log this view can show"
        return f"**The calibration {chosen.label} cannot be shown**: {reason}", pd.DataFrame(), None
    models = ", ".join(dict.fromkeys(r.model for r in rows))
    styles = ", ".join(dict.fromkeys(r.style for r in rows))
    note = f"`{chosen.shown}`: {models}, prompt style {styles}. {settings}"
    return note, _frame(header, body), figure


def show_prediction(calibrations: dict[str, Calibration], key: object) -> tuple[str, pd.DataFrame]:
    """MAJ predicted at the vote for the calibration `key` (per config of N = 5, the room) with
    selection rule 3's picks; a key not listed is refused like `show_calibration`'s."""
    from rrdemo.calibration.predict import other_agreement, rule3_cells
    from rrdemo.calibration.table import K_RULE
    from rrdemo.calibration.vote_table import prediction_note, prediction_table, rule3_line

    chosen = _listed(calibrations, key)
    try:
        log = read_calibration(chosen.path)
        cells = rule3_cells(log)
        agreement = other_agreement(log)
    except (RRError, KeyError, TypeError, ValueError):
        return (
            f"**No prediction**: {chosen.shown} cannot be read as a calibration log",
            pd.DataFrame(),
        )
    if not cells:
        return (
            "**No prediction**: no injected cell beside its cell without injection",
            pd.DataFrame(),
        )
    note = f"{prediction_note(K_RULE, agreement)}\n\n{rule3_line(cells)}"
    return note, _frame(*prediction_table(cells, K_RULE))


# The columns the first table shows (what rule 2 reads); the rest follow in a folded table.
KEY_COLUMNS = ("model", "task", "style", "ceiling", "target without injection")
KEY_COLUMNS += ("obedience moderate", "obedience strong", "target by 16 moderate")
KEY_COLUMNS += ("target by 16 strong", "qualifies")
ROW_NAMES = ("model", "task", "style")


def wrap_titles(figure: go.Figure, width: int = 12) -> None:
    """The subplot titles on short lines ("against" said "vs"), and the figure's title left to
    the plot's label (`PLOT_LABEL`): on a phone the one-line titles of the report's PNG run
    into each other and off the screen."""
    for note in figure.layout.annotations:
        short = note.text.replace(" against ", " vs ")
        note.text = "<br>".join(textwrap.wrap(short, width))
        note.font.size = 11
    figure.update_layout(title=None, margin={"t": 80})


PLOT_LABEL = (
    "Ceiling against obedience, one agent per answer (shaded: where a rescue can show; a cell "
    "qualifies when its bars' lower ends lie there too)"
)


def split_columns(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the key columns, the row names with every other column): two tables that fit a page."""
    key = [c for c in frame.columns if c in KEY_COLUMNS]
    more = [c for c in frame.columns if c in ROW_NAMES or c not in KEY_COLUMNS]
    return frame[key], frame[more]


CHAR_PX = 8.5  # a character of the table's font, with room to spare
CELL_PAD_PX = 30  # a cell's padding and the column menu's button


def column_widths(frame: pd.DataFrame) -> list[str]:
    """Each column as wide as its longest word (header or cell), so no word breaks inside it;
    the cells wrap between words and a table wider than the page scrolls sideways."""

    def longest(values) -> int:
        return max((len(word) for v in values for word in str(v).split()), default=1)

    return [
        f"{round(CHAR_PX * longest([column, *frame[column]]) + CELL_PAD_PX)}px"
        for column in frame.columns
    ]


def build_calibration_view(root: Path | None = None) -> None:
    """Add the calibration section (an open accordion) to the enclosing Blocks/Tab."""
    calibrations = committed_calibrations(root)
    with gr.Accordion("Calibration: where a rescue can show", open=True):
        gr.Markdown(f"{INTRO}\n\n{calibration_note()}")
        if not calibrations:
            gr.Markdown("**No calibration log is committed in this build** (assets/calibration/).")
            return
        key = DEFAULT_KEY if DEFAULT_KEY in calibrations else next(iter(calibrations))
        first = show_calibration(calibrations, key)
        main, more = split_columns(first[1])
        choice = gr.Dropdown(
            [(c.label, c.key) for c in calibrations.values()], value=key, label="Calibration log"
        )
        note = gr.Markdown(first[0], elem_id="rr-calibration-note")
        table = gr.Dataframe(
            main,
            interactive=False,
            wrap=True,
            column_widths=column_widths(main),
            datatype="markdown",  # the verdict is bold where a row qualifies
            label="Ceiling and obedience per task (%, 95% Wilson intervals)",
        )
        with gr.Accordion("Answer rates and lengths per task", open=False):
            more_table = gr.Dataframe(
                more,
                interactive=False,
                wrap=True,
                column_widths=column_widths(more),
                label="Honest answers' first statements, answer, placeholder and cut rates, "
                "mean length (%, 95% Wilson intervals)",
            )
        plot = gr.Plot(first[2], label=PLOT_LABEL)
        votes = show_prediction(calibrations, key)
        vote_note = gr.Markdown(votes[0], elem_id="rr-calibration-prediction")
        vote_table = gr.Dataframe(
            votes[1],
            interactive=False,
            wrap=True,
            column_widths=column_widths(votes[1]),
            datatype="markdown",  # rule 3's picks are bold
            label="MAJ predicted at the vote per config, and the room (%, 95% bootstrap intervals)",
        )

        def prediction(picked: object) -> tuple:
            return show_prediction(calibrations, picked)

        def calibration(picked: object) -> tuple:
            words, frame, figure = show_calibration(calibrations, picked)
            return words, split_columns(frame)[0], figure

        choice.change(
            prediction,
            choice,
            [vote_note, vote_table],
            api_name="calibration_prediction",
            preprocess=False,  # the key as sent: checked against the listed keys
            concurrency_limit=None,  # a small file read and an exact sum: never waits
        )
        choice.change(
            calibration,
            choice,
            [note, table, plot],
            api_name="calibration",
            preprocess=False,  # the key as sent: checked against the listed keys above
            concurrency_limit=None,  # a small file read: never waits behind a model run
        )
        choice.change(
            lambda picked: split_columns(show_calibration(calibrations, picked)[1])[1],
            choice,
            more_table,
            api_visibility="private",
            preprocess=False,
            concurrency_limit=None,
        )
