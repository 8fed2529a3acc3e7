"""The calibration's report: a Markdown table, a CSV of every cell, and one plot of two panels
(ceiling against obedience, and obedience against how early the target is stated, a point per
model x task x style x injection, the qualifying regions shaded)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rrdemo.calibration.log import CalibrationLog, read_calibration
from rrdemo.calibration.predict import Rule3Cell, other_agreement, rule3_cells
from rrdemo.calibration.table import (
    K_RULE,
    QUALIFY,
    TRAPS,
    CalibrationRow,
    calibration_csv,
    calibration_markdown,
    calibration_note,
    calibration_rows,
    cell_stats,
    selected,
)
from rrdemo.calibration.vote_table import (
    prediction_csv,
    prediction_markdown,
    prediction_note,
    rule3_line,
)
from rrdemo.tasks import TASK_NAMES
from rrdemo.tasks.generated import generated_steps

# One colour per model x injection and one marker per prompt style, the same in both panels.
PALETTE = ("#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b")
STYLE_SYMBOLS = {"direct": "circle-open", "step-by-step": "diamond"}


def _symbol(style: str) -> str:
    return STYLE_SYMBOLS.get(style, "square")


# Where each series puts its labels, in turn: a task's points from four series sit close
# together, and their labels then fall on four sides instead of on top of each other.
SIDES = ("top center", "bottom center", "middle right", "middle left")


def calibration_figure(rows: Sequence[CalibrationRow]) -> go.Figure:
    """Left: ceiling (x) against obedience (y) under each of the paper's injections, 95%
    intervals as error bars. Right: obedience (x) against the share of injected answers that
    state the target within their first K_RULE tokens (y). One colour per model x injection,
    one marker per prompt style, one legend entry for both panels (named without the model when
    there is one, under the plots); points are labelled by task, each series on its own side of
    its points so that the labels of one task's points do not cover each other, and hovering a
    point names it with its values."""
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            "ceiling against obedience",
            f"obedience against the target stated within {K_RULE} tokens",
        ),
    )
    x0, y0 = QUALIFY["ceiling"] * 100, QUALIFY["obedience"] * 100
    fig.add_shape(
        type="rect", x0=x0, y0=y0, x1=100, y1=100, line={"width": 0},
        fillcolor="rgba(46, 160, 67, 0.15)", layer="below", row=1, col=1,
    )  # fmt: skip
    fig.add_shape(
        type="rect", x0=y0, y0=0, x1=100, y1=QUALIFY["early_target"] * 100, line={"width": 0},
        fillcolor="rgba(46, 160, 67, 0.15)", layer="below", row=1, col=2,
    )  # fmt: skip
    models = list(dict.fromkeys(r.model for r in rows))
    pairs = [(m, i) for m in models for i in TRAPS]
    colours = {pair: PALETTE[n % len(PALETTE)] for n, pair in enumerate(pairs)}
    series = [(pair, style) for pair in pairs for style in dict.fromkeys(r.style for r in rows)]
    for n, ((model, injection), style) in enumerate(series):
        points = [
            r
            for r in rows
            if r.model == model and r.style == style and r.ceiling and injection in r.obedience
        ]
        if not points:
            continue
        group = f"{model}, {injection}, {style}"
        name = group if len(models) > 1 else f"{injection}, {style}"
        marker = {"symbol": _symbol(style), "size": 10, "color": colours[model, injection]}
        labels = {"textposition": SIDES[n % len(SIDES)], "textfont": {"size": 10}}
        hover = f"%{{text}} · {name}<br>%{{x:.0f}}%, %{{y:.0f}}%<extra></extra>"
        xs = [100 * r.ceiling.value for r in points]
        ys = [100 * r.obedience[injection].value for r in points]
        fig.add_trace(
            go.Scatter(
                x=xs, y=ys, mode="markers+text", name=name, legendgroup=group, marker=marker,
                text=[r.task for r in points], hovertemplate=hover, **labels,
                error_x=_bars(xs, [r.ceiling.interval for r in points]),
                error_y=_bars(ys, [r.obedience[injection].interval for r in points]),
            ),
            row=1, col=1,
        )  # fmt: skip
        early = [(r, r.cells[injection].early("target", K_RULE)) for r in points]
        early = [(r, e) for r, e in early if e is not None]
        if early:
            fig.add_trace(
                go.Scatter(
                    x=[100 * r.obedience[injection].value for r, _ in early],
                    y=[100 * e.value for _, e in early],
                    mode="markers+text", name=name, legendgroup=group, showlegend=False,
                    marker=marker, text=[r.task for r, _ in early], hovertemplate=hover, **labels,
                ),
                row=1, col=2,
            )  # fmt: skip
    _axes_and_legend(fig, models)
    return fig


def _axes_and_legend(fig: go.Figure, models: list[str]) -> None:
    """The calibration figure's axes, title and legend (under the plots; named by the model when
    there is one)."""
    fig.update_xaxes(range=[-5, 105])
    fig.update_yaxes(range=[-5, 105])
    fig.update_xaxes(title_text="ceiling: accuracy without injection (%)", row=1, col=1)
    fig.update_yaxes(title_text="obedience: injected answers equal to the target (%)", row=1, col=1)
    fig.update_xaxes(title_text="obedience (%)", row=1, col=2)
    fig.update_yaxes(title_text=f"target stated within {K_RULE} tokens (%)", row=1, col=2)
    fig.update_layout(
        title=(
            "Calibration (one agent per answer). Shaded: where a rescue can show; a cell "
            "qualifies when its bars' lower ends lie there too"
        ),
        template="plotly_white",
        width=1400,
        height=680,
        legend={
            "orientation": "h", "y": -0.14, "x": 0,
            "title": {"text": f"{models[0]}: injection, style " if len(models) == 1 else ""},
        },
    )  # fmt: skip


def selection_line(rows: Sequence[CalibrationRow], final: bool = True) -> str:
    """What the selection rule picks from these rows, in one sentence ("so far" unless the
    calibration is complete: `final`)."""
    head = "**Selection:**" if final else "**Selection so far** (not final, the run is under way):"
    if any(r.traps is None for r in rows if r.ceiling is not None and len(r.obedience) > 1):
        return f"{head} undecided (a row lacks a ceiling, an injected cell or positions)."
    choice = selected(rows)
    if choice is None:
        return f"{head} no cell qualifies."
    row, injection = choice
    return (
        f"{head} {row.model}, {row.task}, {row.style}, {injection} (min lower bound "
        f"{100 * row.strength(injection):.0f}%)."
    )


def completeness_line(header: dict[str, Any], done: set[tuple[str, str]]) -> str:
    """How much of the planned calibration the log holds: empty when all of it; otherwise the
    answers in, the cells not begun or part done, and that the selection is not final."""
    planned = {
        cell: len(header["split"][cell.split("|")[1]]) for cell in header["cells"]
    }  # a cell is "model|task|style|injection"
    counts = dict.fromkeys(planned, 0)
    for cell, _ in done:
        if cell in counts:
            counts[cell] += 1
    total, have = sum(planned.values()), sum(counts.values())
    if have >= total:
        return ""
    untouched = sum(1 for c in planned if counts[c] == 0)
    partial = sum(1 for c in planned if 0 < counts[c] < planned[c])
    return (
        f"**Under way:** {have} of {total} planned answers; of {len(planned)} cells, {untouched} "
        f"not begun and {partial} part done. The table and the selection read only the answers "
        "in so far; the selection is not final."
    )


def calibration_settings(header: dict[str, Any]) -> str:
    """How a calibration log's answers were drawn, in one sentence, from its header."""
    s, split = header["settings"], header["split"]
    return (
        f"One agent per answer (no RR, no vote); L = {s['max_tokens']}, temperature "
        f"{s['temperature']}, top-p {s['top_p']}, seed {s['seed']}; calibration split: {s['n']} "
        f"questions per task drawn with split seed {s['split_seed']} "
        f"({', '.join(f'{t}: {len(q)}' for t, q in split.items())})."
    )


def _task_kind(task: str) -> str:
    if task in TASK_NAMES:
        return "paper tasks"
    if generated_steps(task):
        return "generated arithmetic (beyond the paper)"
    return "our tasks (not the paper's)"


def calibration_label(header: dict[str, Any]) -> str:
    """A calibration log named for people by its header: its models and which tasks it measured,
    the paper's, our generated arithmetic (beyond the paper) or others of ours."""
    s = header["settings"]
    kinds = dict.fromkeys(_task_kind(t) for t in s["tasks"])
    return f"{', '.join(s['models'])}: {' and '.join(kinds)}"


def _bars(centres: list[float], intervals: list[tuple[float, float]]) -> dict:
    return {
        "type": "data",
        "symmetric": False,
        "array": [100 * hi - c for c, (_, hi) in zip(centres, intervals, strict=True)],
        "arrayminus": [c - 100 * lo for c, (lo, _) in zip(centres, intervals, strict=True)],
    }


def prediction_lines(
    log: CalibrationLog, votes: Sequence[Rule3Cell], final: bool = True
) -> list[str]:
    """The report's section on MAJ predicted at the vote and selection rule 3 (Markdown lines)."""
    if not votes:
        return []
    return [
        "## MAJ predicted at the vote",
        "",
        prediction_note(K_RULE, other_agreement(log)),
        "",
        prediction_markdown(votes, K_RULE),
        "",
        rule3_line(votes, final),
        "",
    ]


def write_calibration_report(
    log_path: Path | str, out: Path | str, png: bool = True, ks: Sequence[int] = ()
) -> Path:
    """calibration.md, calibration.csv, prediction.csv, calibration.html (and .png) in `out`;
    returns the .md.
    Interruptibility is shown at K_RULE and at each K of `ks`."""
    from rrdemo.report.figures import write_png

    log = read_calibration(log_path)
    stats = cell_stats(log)
    rows = calibration_rows(stats)
    ks = tuple(dict.fromkeys((K_RULE, *ks)))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    under_way = completeness_line(log.header, log.done)
    votes = rule3_cells(log)
    lines = [
        "# Calibration",
        "",
        f"Log: `{Path(log_path).name}`. {calibration_settings(log.header)}",
        "",
        *([under_way, ""] if under_way else []),
        calibration_note(ks),
        "",
        calibration_markdown(rows, ks),
        "",
        selection_line(rows, final=not under_way),
        "",
        "![ceiling against obedience](calibration.png)",
        "",
        *prediction_lines(log, votes, final=not under_way),
    ]
    md = out / "calibration.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    (out / "calibration.csv").write_text(calibration_csv(stats, ks), encoding="utf-8")
    (out / "prediction.csv").write_text(prediction_csv(votes), encoding="utf-8")
    fig = calibration_figure(rows)
    fig.write_html(out / "calibration.html", include_plotlyjs="cdn", div_id="calibration")
    if png:
        write_png(fig, out / "calibration.png")
    return md
