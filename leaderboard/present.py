"""Tables, chart and CSV for the board, built from rows (no gradio; the UI only shows them).

Tables hold submitted strings (model names, submitter, notes) as they are: the page shows table
cells as text, so escaping them too would show `&lt;` to users. The chart's names go through
`html.escape` once, since plotly renders a subset of HTML in legends and hover labels. The CSV
keeps the raw text but defuses spreadsheet formulas. The row table
and the CSV take their columns from `leaderboard.columns`.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from leaderboard.columns import BOARD_COLUMNS, CSV_COLUMNS, BoardRow, Column
from leaderboard.orm import SubmissionRecord
from leaderboard.ranking import (
    INTERVALS,
    POOLED_ESTIMATOR,
    TASK_FAMILIES,
    Interval,
    ModelScore,
    PooledLine,
    accuracy_by_rho,
    rank_labels,
)
from rrdemo.report.figures import PALETTE, RhoLine, accuracy_rho_figure
from rrdemo.report.paired import detectable_text
from rrdemo.report.render import pct
from rrdemo.report.submission import ESTIMATORS

RANKING_COLUMNS = [
    "rank", "model", "source", "tasks", "RRMaj % (rho>=0.6)", "RRMaj 95% CI", "MAJ % (rho>=0.6)",
    "mean gain %", "robustness tax %", "asymmetric yield %", "rows", "fewest questions",
    "estimator", "prompt styles", "EOS policies", "intervals", "rows not averaged",
]  # fmt: skip
POOLED_COLUMNS = [
    "model", "config", "rho band", "tasks pooled", "prompt styles", "injections", "EOS policies",
    "studies or logs", "questions", "MAJ %", "RRMaj %", "RRMaj - MAJ [95%]", "MAJ right only",
    "RRMaj right only", "McNemar p", "smallest lead detectable (80% power)", "verdict",
    "not pooled", "estimator",
]  # fmt: skip
PENDING_COLUMNS = ["submission", "status", "source", "submitter", "notes", "rows", "models"]
UNSTATED = "-"  # the cell of a run setting a row does not state


def safe(text: str | None) -> str:
    """Submitted text made inert for the chart (plotly renders HTML tags in names)."""
    return html.escape(text or "", quote=True)


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 1)


def _settings(values: Sequence[str | None], how: str = "averaged") -> str:
    """A score's values of one run setting, "-" for rows that do not state it; a line that
    averages (or pools) rows of several says so."""
    text = ", ".join(UNSTATED if v is None else v for v in values)
    return f"{text} ({how} into one line)" if len(values) > 1 else text


def _ci(interval: Interval | None) -> str:
    return "" if interval is None else f"[{100 * interval.lo:.1f}, {100 * interval.hi:.1f}]"


def shown(column: Column, row: BoardRow) -> object:
    """The value of `column` as the board table shows it (percent, rounded; text as is; a
    setting the row does not state as "-"; the estimator in words)."""
    value = getattr(row, column.attr)
    if column.display == "estimator":
        return row.estimator_name
    if column.display == "stated":
        return UNSTATED if value is None else value
    if column.display == "percent":
        return _pct(value)
    if column.display == "ratio":
        return round(value, 3)
    return value


def board_frame(rows: Iterable[BoardRow]) -> pd.DataFrame:
    """The filterable row table, accuracies in percent."""
    records = [[shown(c, r) for c in BOARD_COLUMNS] for r in rows]
    return pd.DataFrame(records, columns=[c.label for c in BOARD_COLUMNS])


def _estimators(values: Sequence[str | None]) -> str:
    return ", ".join(ESTIMATORS.get(v or "", "not stated") for v in values)


def ranking_frame(scores: Sequence[ModelScore], tasks: str | None = None) -> pd.DataFrame:
    """The per-model ranking table (percent): one task family's scores when `tasks` names one
    (`TASK_FAMILIES`), else all, each family ranked on its own; tied scores share an "=k" rank."""
    ranks = rank_labels(scores)
    records = [
        [
            rank,
            s.model,
            ", ".join(s.sources),
            s.tasks,
            _pct(s.rrmaj_majority),
            _ci(s.rrmaj_majority_ci),
            _pct(s.maj_majority),
            _pct(s.mean_gain),
            _pct(s.robustness_tax),
            _pct(s.asymmetric_yield),
            s.n_majority_rows + s.n_minority_rows,
            s.questions,
            _estimators(s.estimators),
            _settings(s.prompt_styles),
            _settings(s.eos_policies),
            INTERVALS.get(s.intervals, "none"),
            "; ".join(s.left_out),
        ]  # fmt: skip
        for rank, s in zip(ranks, scores, strict=True)
        if tasks is None or s.tasks == tasks
    ]
    return pd.DataFrame(records, columns=RANKING_COLUMNS)


def _values(line: PooledLine, name: str) -> tuple[str | None, ...]:
    """The values of setting `name` among a line's rows, in order, each once."""
    return tuple(dict.fromkeys(getattr(r, name) for r in line.rows))


def pooled_frame(lines: Sequence[PooledLine]) -> pd.DataFrame:
    """RRMaj - MAJ per model and config pooled over independent runs (`ranking.pooled_lines`),
    written as the README's results table writes a pooled row (points, signed); the verdict only
    under majority corruption, where a lead is a rescue."""
    records = []
    for line in lines:
        e = line.estimate
        records.append(
            [
                line.model, line.label, line.band,
                ", ".join(r.dataset_label for r in line.rows),
                _settings(_values(line, "prompt_style"), "pooled"),
                _settings(_values(line, "strength"), "pooled"),
                _settings(_values(line, "eos_policy"), "pooled"),
                ", ".join(r.provenance or f"submission #{r.submission_id}" for r in line.rows),
                e.questions, pct(e.maj), pct(e.rrmaj),
                f"{pct(e.delta, True)} [{pct(e.lo, True)}, {pct(e.hi, True)}]",
                e.maj_only, e.rrmaj_only, f"{e.p_mcnemar:.2g}", detectable_text(e.detectable),
                e.verdict if line.band == "majority" else "", "; ".join(line.left_out),
                POOLED_ESTIMATOR if e.strata > 1 else "paired per question (its run's table)",
            ]
        )  # fmt: skip
    return pd.DataFrame(records, columns=POOLED_COLUMNS)


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """The table with "-" wherever the rows give no number (no minority row, no interval), never
    None, NaN or an empty cell: a column of blanks would also squeeze its header on the page."""
    frame = frame.astype(object)
    return frame.where(frame.notna() & (frame != ""), UNSTATED)


def ranking_text(scores: Sequence[ModelScore], lines: Sequence[PooledLine] = ()) -> str:
    """The ranking as plain text (the CLI's): one table per task family, headed by it, then the
    pooled lines (`pooled_frame`), if any."""
    blocks = []
    for family in TASK_FAMILIES:
        frame = ranking_frame(scores, family)
        if len(frame):
            blocks.append(f"Ranked on {family}:\n" + readable(frame).to_string(index=False))
    if lines:
        pooled = readable(pooled_frame(lines)).to_string(index=False)
        blocks.append(f"RRMaj - MAJ pooled per model and config ({POOLED_ESTIMATOR}):\n{pooled}")
    return "\n\n".join(blocks) or "No model has a current row to rank."


def pending_frame(submissions: Iterable[SubmissionRecord]) -> pd.DataFrame:
    """Submissions for the admin panel."""
    records = [
        [
            s.id,
            s.status,
            s.source,
            s.submitter,
            s.notes[:200],
            len(s.rows),
            ", ".join(sorted({r.model for r in s.rows}))[:200],
        ]  # fmt: skip
        for s in submissions
    ]
    return pd.DataFrame(records, columns=PENDING_COLUMNS)


def accuracy_figure(rows: Iterable[BoardRow]) -> go.Figure:
    """MAJ (dashed) and RRMaj (solid) accuracy against rho, one colour per model."""
    lines = []
    for i, (model, points) in enumerate(accuracy_by_rho(rows).items()):
        name, colour = safe(model), PALETTE[i % len(PALETTE)]
        rho = [p[0] for p in points]
        for method, values in (("MAJ", [p[1] for p in points]), ("RRMaj", [p[2] for p in points])):
            lines.append(RhoLine(f"{name} {method}", method, rho, values, colour, group=name))
    return accuracy_rho_figure(lines, legend_title="model and method")


def _defuse(value: object) -> object:
    # A cell starting with = + - @ would run as a formula in a spreadsheet.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def csv_text(rows: Iterable[BoardRow]) -> str:
    """The rows as CSV text (fractions, raw submitted text with formulas defused)."""
    handle = io.StringIO(newline="")
    writer = csv.writer(handle)
    writer.writerow([c.name for c in CSV_COLUMNS])
    for r in rows:
        writer.writerow([_defuse(c.value(r)) for c in CSV_COLUMNS])
    return handle.getvalue()


def write_csv(rows: Iterable[BoardRow], path: Path) -> Path:
    """Write the rows as a CSV file (`csv_text`)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        handle.write(csv_text(rows))
    return path


def write_ranking_csv(scores: Sequence[ModelScore], path: Path) -> Path:
    """Write the ranking table as CSV (percent, as the board shows it, "-" where it gives no
    number; formulas defused)."""
    frame = readable(ranking_frame(scores))
    frame["model"] = frame["model"].map(_defuse)
    frame.to_csv(path, index=False)
    return path
