"""The plots: accuracy against rho (one function for the report, the Experiments tab and the
leaderboard), the report's M-scaling and K-ablation plots, and their PNG export.

Accuracies come in as fractions in [0, 1] and are drawn in %.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from rrdemo.events import METHODS
from rrdemo.report.tables import KPoint, RhoPoint, ScalingPoint

if TYPE_CHECKING:
    from rrdemo.report.forest import ForestRow, PaperPoint

METHOD_COLOURS = {"MAJ": "#636EFA", "RRMaj": "#EF553B"}
METHOD_DASHES = {"MAJ": "dash", "RRMaj": "solid"}
PALETTE = (
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
)  # fmt: skip  # one colour per group of lines (model, task, setting)


def _percent(values: Iterable[float | None]) -> list[float | None]:
    return [None if v is None else round(100 * v, 2) for v in values]


# -- accuracy against rho -------------------------------------------------------------------------
@dataclass(frozen=True)
class RhoLine:
    """One line of the accuracy-against-rho plot: a method's accuracy at each rho = c/N."""

    name: str  # the legend entry, shown as given (escape submitted text before)
    method: str  # "MAJ" or "RRMaj": its colour and dash unless given below
    rho: Sequence[float]
    accuracy: Sequence[float | None]  # fractions in [0, 1]; None leaves a gap
    colour: str | None = None  # None: the method's colour
    dash: str | None = None  # None: MAJ dashed, RRMaj solid
    width: float = 2.5
    group: str | None = None  # legend group: its lines show and hide together


def accuracy_rho_figure(
    lines: Iterable[RhoLine],
    title: str | None = None,
    *,
    legend_title: str | None = None,
    height: int = 460,
    width: int | None = None,
) -> go.Figure:
    """MAJ and RRMaj accuracy (%) against the corruption ratio rho = c/N, with a line at rho = 0.5,
    where the corrupted agents become a majority."""
    fig = go.Figure()
    for line in lines:
        fig.add_trace(
            go.Scatter(
                x=list(line.rho),
                y=_percent(line.accuracy),
                mode="lines+markers",
                name=line.name,
                legendgroup=line.group,
                line={
                    "color": line.colour or METHOD_COLOURS.get(line.method),
                    "dash": line.dash or METHOD_DASHES.get(line.method, "solid"),
                    "width": line.width,
                },
                hovertemplate=f"{line.name}<br>rho=%{{x:.2f}}<br>%{{y:.1f}}%<extra></extra>",
            )
        )
    fig.add_vline(x=0.5, line_dash="dot", line_color="gray", annotation_text="ρ = 0.5")
    fig.update_layout(
        title=title,
        xaxis_title="ρ = c / N (corrupted fraction)",
        yaxis_title="accuracy (%)",
        xaxis_range=[-0.02, 1.02],
        yaxis_range=[-2, 102],
        legend_title=legend_title,
        template="plotly_white",
        height=height,
        width=width,
        margin={"l": 60, "r": 20, "t": 50 if title else 30, "b": 50},
    )
    return fig


def rho_curve_figure(points: Sequence[RhoPoint]) -> go.Figure:
    """The report's plot (`analysis.rho_curve`): per ensemble, strength and K, the mean over
    datasets in bold and each dataset thin, coloured by method."""
    lines = []
    groups = sorted({(p.ensemble, p.strength, p.k) for p in points})
    for ens, strength, k in groups:
        tag = f" · {ens}, {strength}, K={k}" if len(groups) > 1 else ""
        tasks = sorted(
            {p.task for p in points if (p.ensemble, p.strength, p.k) == (ens, strength, k)}
        )
        if len(tasks) == 2:  # one dataset: its mean is itself
            tasks = [t for t in tasks if t != "all"]
        for number, task in enumerate(tasks):
            mean = task == "all" or len(tasks) == 1
            for method in METHODS:
                ps = [
                    p
                    for p in points
                    if (p.ensemble, p.strength, p.k, p.task, p.method)
                    == (ens, strength, k, task, method)
                ]
                lines.append(
                    RhoLine(
                        f"{method} ({'mean' if task == 'all' else task}){tag}",
                        method,
                        [p.rho for p in ps],
                        [p.accuracy for p in ps],
                        dash="solid"
                        if mean
                        else ("dot", "dash", "dashdot", "longdash")[number % 4],
                        width=3 if mean else 1.5,
                        group=method,
                    )
                )
    title = "Accuracy against the corruption ratio ρ = c/N (M = N)"
    return accuracy_rho_figure(lines, title, height=520, width=900)


# -- the report's other plots ---------------------------------------------------------------------
def _figure(title: str, x_title: str) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title="accuracy (%)",
        yaxis_range=[0, 100],
        template="plotly_white",
        width=900,
        height=520,
    )
    return fig


def _series(fig: go.Figure, name: str, xs, ys, dash: str = "solid", width: float = 3) -> None:
    fig.add_trace(
        go.Scatter(
            x=list(xs),
            y=_percent(ys),
            name=name,
            mode="lines+markers",
            line={"dash": dash, "width": width},
        )
    )


def scaling_figure(points: Sequence[ScalingPoint]) -> go.Figure:
    fig = _figure("Accuracy against the number of votes M (mean over datasets)", "M")
    for key in sorted({(p.ensemble, p.strength, p.k, p.label) for p in points}):
        for method in METHODS:
            ps = sorted(
                (
                    p
                    for p in points
                    if (p.ensemble, p.strength, p.k, p.label) == key
                    and p.task == "all"
                    and p.method == method
                ),
                key=lambda p: p.m,
            )
            _series(
                fig,
                f"{method} {key[3]} ({key[1]}, K={key[2]})",
                [p.m for p in ps],
                [p.mean for p in ps],
                "solid" if method == "RRMaj" else "dash",
            )
    return fig


def k_figure(points: Sequence[KPoint]) -> go.Figure:
    fig = _figure("RRMaj accuracy against the chunk size K", "K (tokens per turn)")
    fig.update_xaxes(type="log")
    for key in sorted({(p.ensemble, p.strength, p.label, p.task) for p in points}):
        ps = sorted(
            (p for p in points if (p.ensemble, p.strength, p.label, p.task) == key),
            key=lambda p: p.k,
        )
        _series(
            fig,
            f"{key[3] if key[3] != 'all' else 'AVG'} {key[2]} ({key[1]})",
            [p.k for p in ps],
            [p.rrmaj for p in ps],
            "solid" if key[3] == "all" else "dot",
        )
    return fig


# -- the forest plot -------------------------------------------------------------------------------
PAPER_SYMBOLS = ("circle-open", "square-open", "diamond-open", "triangle-up-open", "x-thin-open")


def forest_figure(
    rows: Sequence[ForestRow], paper: Sequence[PaperPoint], label: str = "3c2t"
) -> go.Figure:
    """Each run's RRMaj - MAJ (points) with its 95% interval, the pool's last (a filled diamond),
    and beside a run the paper's Delta per paper model (open markers, no interval), top to bottom
    in the order given."""
    fig = go.Figure()
    y = {i: len(rows) - 1 - i for i in range(len(rows))}  # the first row on top
    for i, row in enumerate(rows):
        colour = "#000000" if row.pooled else (PALETTE[0] if row.counted else "#7f7f7f")
        fig.add_trace(
            go.Scatter(
                x=[row.delta], y=[y[i]], mode="markers", showlegend=False,
                marker={"symbol": "diamond" if row.pooled else "circle", "color": colour,
                        "size": 13 if row.pooled else 10},
                error_x={"type": "data", "symmetric": False, "array": [row.hi - row.delta],
                         "arrayminus": [row.delta - row.lo], "color": colour, "thickness": 2},
                hovertemplate=f"{row.label}<br>%{{x:+.1f}} [{row.lo:+.1f}, {row.hi:+.1f}]"
                "<extra></extra>",
            )
        )  # fmt: skip
    models = sorted({p.model for p in paper})
    for j, model in enumerate(models):
        mine = [p for p in paper if p.model == model]
        fig.add_trace(
            go.Scatter(
                x=[p.delta for p in mine], y=[y[p.row] - 0.28 for p in mine], mode="markers",
                name=f"paper: {model}", marker={"symbol": PAPER_SYMBOLS[j % len(PAPER_SYMBOLS)],
                "size": 9, "color": PALETTE[(j + 1) % len(PALETTE)]},
                hovertemplate=f"paper, {model}: %{{x:+.1f}}<extra></extra>",
            )
        )  # fmt: skip
    fig.add_vline(x=0, line_dash="dot", line_color="gray")
    fig.update_layout(
        title=f"RRMaj - MAJ at {label}: the runs here (95% interval) beside the paper's models",
        xaxis_title="RRMaj - MAJ (points); the paper's Delta: open markers, no interval",
        yaxis={"tickvals": list(y.values()), "ticktext": [r.label for r in rows],
               "range": [-0.8, len(rows) - 0.4]},
        legend_title="the paper, same task and injection",
        template="plotly_white", width=1100, height=140 + 70 * len(rows),
        margin={"l": 20, "r": 20, "t": 50, "b": 50},
    )  # fmt: skip
    return fig


# -- PNG ------------------------------------------------------------------------------------------
def _browser() -> str | None:
    """A system Chromium or Chrome for kaleido; None lets kaleido find its own (it honours
    `BROWSER_PATH` when the user set it)."""
    if os.environ.get("BROWSER_PATH"):
        return None
    names = ("chromium", "chromium-browser", "google-chrome")
    return next((path for path in map(shutil.which, names) if path), None)


def write_png(fig: go.Figure, path: Path) -> str:
    """Write a PNG with kaleido (system chromium), else matplotlib; returns which one, or why none.

    The browser is handed to kaleido as an argument: the process environment is left alone.
    """
    try:
        import kaleido  # the PNG engines are optional: an HTML figure is always written

        browser = _browser()
        png = kaleido.calc_fig_sync(
            fig, opts={"format": "png", "scale": 2}, kopts={"path": browser} if browser else {}
        )
        path.write_bytes(png)
        return "kaleido"
    except Exception as exc:  # any failure of the headless browser falls back
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return f"no PNG (kaleido failed: {reason}; matplotlib is not installed)"
    figure, ax = plt.subplots(figsize=(9, 5.2))
    for trace in fig.data:
        ax.plot(
            list(trace.x),
            list(trace.y),
            label=trace.name,
            linestyle="--" if trace.line.dash != "solid" else "-",
        )
    ax.set_ylim(0, 100)
    ax.set_title(fig.layout.title.text)
    ax.legend(fontsize=7)
    figure.savefig(path, dpi=150)
    plt.close(figure)
    return "matplotlib"


def write_folder(
    out: Path, files: Mapping[str, str], figures: Mapping[str, go.Figure], png: bool, prefix: str
) -> list[Path]:
    """Text files and figures into `out`, whole or not at all (written in a temporary folder
    beside it, then moved in): each figure as `stem.html` with a fixed element id (the same input
    gives the same files; plotly draws a random one) and, with `png`, `stem.png`; figures.txt
    says which engine drew each PNG. Returns the paths written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=prefix) as tmp:
        for name, text in files.items():
            (Path(tmp) / name).write_text(text.rstrip("\n") + "\n", encoding="utf-8")
        notes = []
        for stem, fig in figures.items():
            fig.write_html(str(Path(tmp) / f"{stem}.html"), include_plotlyjs="cdn", div_id=stem)
            if png:
                notes.append(f"{stem}.png: {write_png(fig, Path(tmp) / f'{stem}.png')}")
        (Path(tmp) / "figures.txt").write_text("\n".join(notes) + "\n", encoding="utf-8")
        out.mkdir(exist_ok=True)
        for item in sorted(Path(tmp).iterdir()):
            os.replace(item, out / item.name)
            written.append(out / item.name)
    return written
