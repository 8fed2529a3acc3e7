"""The calibration's report: a Markdown table, a CSV of every cell, and one plot (ceiling against
obedience, a point per model x task x style x injection, the qualifying region shaded)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import plotly.graph_objects as go

from rrdemo.calibration.log import read_calibration
from rrdemo.calibration.table import (
    QUALIFY,
    TRAPS,
    CalibrationRow,
    calibration_csv,
    calibration_markdown,
    calibration_rows,
    cell_stats,
)


def calibration_figure(rows: Sequence[CalibrationRow]) -> go.Figure:
    """Ceiling (x) against obedience (y) under each of the paper's injections, one marker shape
    per injection, 95% intervals as error bars."""
    fig = go.Figure()
    x0, y0 = QUALIFY["ceiling"] * 100, QUALIFY["obedience"] * 100
    fig.add_shape(
        type="rect", x0=x0, y0=y0, x1=100, y1=100, line={"width": 0},
        fillcolor="rgba(46, 160, 67, 0.15)", layer="below",
    )  # fmt: skip
    fig.add_annotation(x=100, y=y0, xanchor="right", yanchor="bottom", showarrow=False,
                       text="qualifies: a rescue can show here")  # fmt: skip
    symbols = {"strong": "circle", "moderate": "diamond-open"}
    for model in dict.fromkeys(r.model for r in rows):
        for injection in TRAPS:
            points = [
                r for r in rows if r.model == model and r.ceiling and injection in r.obedience
            ]
            if not points:
                continue
            xs = [100 * r.ceiling.value for r in points]
            ys = [100 * r.obedience[injection].value for r in points]
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="markers+text",
                    name=f"{model}, {injection}",
                    marker={"symbol": symbols[injection], "size": 10},
                    text=[f"{r.task} ({r.style})" for r in points],
                    textposition="top center",
                    error_x=_bars(xs, [r.ceiling.interval for r in points]),
                    error_y=_bars(ys, [r.obedience[injection].interval for r in points]),
                )
            )
    fig.update_layout(
        title="Calibration: ceiling against obedience to each injection (one agent per answer)",
        xaxis_title="ceiling: accuracy without injection (%)",
        yaxis_title="obedience: injected answers equal to the target (%)",
        xaxis_range=[-5, 105],
        yaxis_range=[-5, 105],
        template="plotly_white",
        width=900,
        height=640,
    )
    return fig


def _bars(centres: list[float], intervals: list[tuple[float, float]]) -> dict:
    return {
        "type": "data",
        "symmetric": False,
        "array": [100 * hi - c for c, (_, hi) in zip(centres, intervals, strict=True)],
        "arrayminus": [c - 100 * lo for c, (lo, _) in zip(centres, intervals, strict=True)],
    }


def write_calibration_report(log_path: Path | str, out: Path | str, png: bool = True) -> Path:
    """calibration.md, calibration.csv, calibration.html (and .png) in `out`; returns the .md."""
    from rrdemo.report.figures import write_png

    log = read_calibration(log_path)
    stats = cell_stats(log)
    rows = calibration_rows(stats)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    s = log.header["settings"]
    split = log.header["split"]
    lines = [
        "# Calibration",
        "",
        f"Log: `{Path(log_path).name}`. One agent per answer (no RR, no vote); "
        f"L = {s['max_tokens']}, temperature {s['temperature']}, top-p {s['top_p']}, seed "
        f"{s['seed']}; calibration split: {s['n']} questions per task drawn with split seed "
        f"{s['split_seed']} ({', '.join(f'{t}: {len(q)}' for t, q in split.items())}).",
        "",
        "Rates in % with 95% Wilson intervals. **Ceiling**: answers right without injection. "
        "**Obedience**: injected answers equal to the target (*target without injection*: the "
        "same share when nothing is injected). Answered, placeholder (the text copies a format "
        'placeholder such as "The answer is N.") and cut (no answer before L) pool all the '
        f"row's answers. A row **qualifies** under an injection (strong or moderate, the paper's "
        f"two) when its ceiling >= {QUALIFY['ceiling']:.0%} and its obedience to that injection "
        f">= {QUALIFY['obedience']:.0%}.",
        "",
        calibration_markdown(rows),
        "",
        "![ceiling against obedience](calibration.png)",
        "",
    ]
    md = out / "calibration.md"
    md.write_text("\n".join(lines), encoding="utf-8")
    (out / "calibration.csv").write_text(calibration_csv(stats), encoding="utf-8")
    fig = calibration_figure(rows)
    fig.write_html(out / "calibration.html", include_plotlyjs="cdn")
    if png:
        write_png(fig, out / "calibration.png")
    return md
