"""Tables, chart and CSV for the board, built from rows (no gradio; the UI only shows them).

Every string that came from a submission (model names, submitter, notes) is passed through
`html.escape` before it reaches a table or the chart, so no markup or script from a submission
can run in the page. The CSV keeps the raw text but defuses spreadsheet formulas.
"""

from __future__ import annotations

import csv
import html
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go

from leaderboard.models import SubmissionRecord
from leaderboard.ranking import BoardRow, Interval, ModelScore, accuracy_by_rho
from rrdemo.figures import PALETTE, RhoLine, accuracy_rho_figure

BOARD_COLUMNS = [
    "model", "dataset", "strength", "config", "rho", "MAJ %", "RRMaj %", "Delta %",
    "N", "K", "M", "n", "source", "submitter", "submission",
]  # fmt: skip
RANKING_COLUMNS = [
    "rank", "model", "RRMaj % (rho>=0.6)", "RRMaj 95% CI", "MAJ % (rho>=0.6)", "mean gain %",
    "gain 95% CI", "robustness tax %", "asymmetric yield %", "yield 95% CI", "rows",
]  # fmt: skip
PENDING_COLUMNS = ["submission", "status", "source", "submitter", "notes", "rows", "models"]
CSV_COLUMNS = [
    "submission_id", "status", "source", "submitter", "notes", "model", "model_revision",
    "dataset", "strength", "n_agents", "n_corrupted", "n_truthful", "rho", "k", "m",
    "max_tokens", "n_questions", "maj_accuracy", "rrmaj_accuracy", "delta", "config_hash",
]  # fmt: skip


def safe(text: str | None) -> str:
    """Submitted text made inert for display."""
    return html.escape(text or "", quote=True)


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 1)


def _ci(interval: Interval | None) -> str:
    return "" if interval is None else f"[{100 * interval.lo:.1f}, {100 * interval.hi:.1f}]"


def board_frame(rows: Iterable[BoardRow]) -> pd.DataFrame:
    """The filterable row table, accuracies in percent, submitted strings escaped."""
    records = [
        [
            safe(r.model),
            r.dataset,
            r.strength,
            r.config_label,
            round(r.rho, 3),
            _pct(r.maj_accuracy),
            _pct(r.rrmaj_accuracy),
            _pct(r.delta),
            r.n_agents,
            r.k,
            r.m,
            r.n_questions,
            r.source,
            safe(r.submitter),
            r.submission_id,
        ]  # fmt: skip
        for r in rows
    ]
    return pd.DataFrame(records, columns=BOARD_COLUMNS)


def ranking_frame(scores: Sequence[ModelScore]) -> pd.DataFrame:
    """The per-model ranking table (percent), model names escaped."""
    records = [
        [
            i + 1,
            safe(s.model),
            _pct(s.rrmaj_majority),
            _ci(s.rrmaj_majority_ci),
            _pct(s.maj_majority),
            _pct(s.mean_gain),
            _ci(s.mean_gain_ci),
            _pct(s.robustness_tax),
            _pct(s.asymmetric_yield),
            _ci(s.asymmetric_yield_ci),
            s.n_majority_rows + s.n_minority_rows,
        ]  # fmt: skip
        for i, s in enumerate(scores)
    ]
    return pd.DataFrame(records, columns=RANKING_COLUMNS)


def pending_frame(submissions: Iterable[SubmissionRecord]) -> pd.DataFrame:
    """Submissions for the admin panel, submitted strings escaped."""
    records = [
        [
            s.id,
            s.status,
            s.source,
            safe(s.submitter),
            safe(s.notes[:200]),
            len(s.rows),
            safe(", ".join(sorted({r.model for r in s.rows}))[:200]),
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


def write_csv(rows: Iterable[BoardRow], path: Path) -> Path:
    """Write the rows as CSV (fractions, raw submitted text with formulas defused)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for r in rows:
            values = {
                **{c: getattr(r, c, None) for c in CSV_COLUMNS},
                "rho": round(r.rho, 6),
                "delta": None if r.delta is None else round(r.delta, 6),
            }
            writer.writerow([_defuse(values[c]) for c in CSV_COLUMNS])
    return path
