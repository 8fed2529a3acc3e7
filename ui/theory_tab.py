"""The Theory tab: the paper's stability bound rho_max(K) as an interactive plot.

Sliders set gamma_H (honest spectral gap) and the compounding drift rate alpha; the plot shows
rho_max over K with the majority line (rho = 0.5) and the 3c2t line (rho = 0.6), and the text
below gives both terms of the bound at the chosen K. All numbers come from `rrdemo.theory`.
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rrdemo.errors import RRError
from rrdemo.report.theory_fit import load_fit_records
from rrdemo.theory import (
    PAPER_DRIFT,
    PAPER_GAMMA_H,
    PAPER_K,
    bound_curve,
    largest_k,
    stability_bound,
)
from ui.errors import user_error
from ui.layout import legend_below

EXPLAINER = r"""
**Stability bound (appendix B).** Over one RR turn of K tokens an honest agent removes at least
R_H(K) = 1 - (1 - gamma_H)^K of the error potential, while a corrupted agent adds at most
Delta V_C(K) = (1 + alpha)^K - 1 (compounding drift delta(V) = alpha V). A sufficient condition
for RR to stay stable (conservative: derived from the worst-case drift, so above it the bound
says nothing) is a corruption ratio below

rho_max(K) = (1 + Delta V_C(K) / R_H(K))^-1.

Restoration grows sub-linearly in K and the drift super-linearly, so for short turns the bound
covers a corrupted *majority* (rho_max > 0.5) and for long generations (K -> infinity) almost
nothing. The paper's illustrative parameters gamma_H = 0.03, alpha = 0.004 and K = 100 give
rho_max of about 66.0%.
"""


def _ks(k_max: int) -> list[int]:
    step = max(1, k_max // 400)
    return list(range(1, k_max + 1, step))


def bound_figure(gamma_h: float, drift: float, k: int, k_max: int) -> go.Figure:
    """rho_max against K, with reference lines and the chosen K marked."""
    curve = bound_curve(gamma_h, drift, _ks(k_max))
    chosen = stability_bound(gamma_h, drift, k)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[b.k for b in curve],
            y=[b.rho_max for b in curve],
            mode="lines",
            name="rho_max(K)",
            line={"color": "#1d4ed8", "width": 3},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[chosen.k],
            y=[chosen.rho_max],
            mode="markers+text",
            name=f"K = {chosen.k}",
            text=[f"{chosen.rho_max:.1%}"],
            textposition="top right",
            marker={"size": 11, "color": "#dc2626"},
        )
    )
    fig.add_hline(
        y=0.5, line_dash="dash", line_color="#71717a", annotation_text="majority (rho = 0.5)"
    )
    fig.add_hline(y=0.6, line_dash="dot", line_color="#c2410c", annotation_text="3c2t (rho = 0.6)")
    fig.update_layout(
        xaxis_title="K (tokens per turn)",
        yaxis_title="rho_max (share the bound covers)",
        yaxis={"range": [0, 1.02], "automargin": True},
        margin={"l": 70, "r": 20, "t": 30, "b": 50},
        height=420,
        legend={"orientation": "h", "y": -0.2},
    )
    return fig


def bound_text(gamma_h: float, drift: float, k: int) -> str:
    """Both sides of the race at K, and the longest turn that still survives 3c2t."""
    b = stability_bound(gamma_h, drift, k)
    k_3c2t = largest_k(gamma_h, drift, 0.6)
    k_major = largest_k(gamma_h, drift, 0.5)
    verdict = (
        "a corrupted majority is inside it"
        if b.super_majority
        else "it does not reach a corrupted majority"
    )
    lines = [
        f"At **K = {b.k}**: restoration R_H(K) = **{b.restoration:.3f}**, adversarial drift "
        f"Delta V_C(K) = **{b.adversarial:.3f}**, so **rho_max = {_share(b.rho_max)}**: "
        + _covered(b.rho_max)
        + f", and {verdict}.",
        "Longest turn with rho_max > 0.5: "
        + (f"K = {k_major}" if k_major else "none (even K = 1 fails)")
        + "; with rho_max > 0.6 (survives 3c2t): "
        + (f"K = {k_3c2t}" if k_3c2t else "none")
        + ".",
    ]
    return "\n\n".join(lines)


def _share(rho: float) -> str:
    """A share as the text can say it: 66.0%, or "below 0.1%" where one decimal would read 0.0%."""
    return f"{rho:.1%}" if rho >= 0.001 else "below 0.1%"


def _covered(rho: float) -> str:
    """What rho_max guarantees, in words that hold at every K."""
    if rho < 0.001:  # the drift compounds past anything the honest agents restore
        return (
            "the bound guarantees nothing here: even a single corrupted agent among a thousand is "
            "more than it covers, so at this K it says nothing about whether RR stays stable"
        )
    return (
        f"the bound guarantees RR stays stable while fewer than {rho:.1%} of the agents are "
        "corrupted"
    )


def _update(gamma_h: float, drift_percent: float, k: float, k_max: float):
    try:
        drift = float(drift_percent) / 100
        k, k_max = int(k), max(int(k_max), int(k))
        return bound_figure(float(gamma_h), drift, k, k_max), bound_text(float(gamma_h), drift, k)
    except (ValueError, OverflowError, TypeError) as exc:  # RRError is a ValueError
        if not isinstance(exc, RRError):
            exc = RRError("gamma_h, drift and K must be finite numbers within the sliders' ranges")
        raise user_error(exc, "plot") from None


FITTED = """**Fitted from metered runs.** A report of a sweep run with the truth meter
(`meter: true`, docs/theory.md) writes `theory_fit.json`: gamma_H and alpha measured per model
and task. Pick one to see the bound they predict beside the accuracy the same runs reached."""


def committed_fits(root: Path | None = None) -> list[str]:
    """The theory_fit.json files of the reports shipped under assets/ (read when called)."""
    root = root or Path(__file__).resolve().parents[1] / "assets"
    return sorted(str(p.relative_to(root.parent)) for p in root.glob("*/*/theory_fit.json"))


def fit_figure(record: dict, k_max: int = 1000) -> go.Figure:
    """Left: rho_max(K) with the fitted gamma_H and alpha; right: the observed MAJ and RRMaj
    accuracy against rho, with the predicted rho_max at the run's K as a vertical line."""
    fig = make_subplots(  # one above the other: side by side, a phone's titles overlap
        rows=2,
        cols=1,
        subplot_titles=("predicted rho_max(K)", "observed accuracy against rho"),
        vertical_spacing=0.18,
    )
    gamma, alpha, bound = record["gamma_h"], record["alpha"], record["rho_max"]
    if bound is not None:
        curve = bound_curve(gamma[0], max(alpha[0], 0.0), _ks(k_max))
        fig.add_trace(
            go.Scatter(x=[b.k for b in curve], y=[b.rho_max for b in curve], name="rho_max(K)"),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(x=[record["k"]], y=[bound], mode="markers", name=f"K = {record['k']}"),
            row=1,
            col=1,
        )
        fig.add_vline(x=bound, line_dash="dash", row=2, col=1, annotation_text="rho_max")
    points = sorted(record["observed"], key=lambda p: p["rho"])
    for method in ("rrmaj", "maj"):
        fig.add_trace(
            go.Scatter(
                x=[p["rho"] for p in points],
                y=[p[method] for p in points],
                mode="lines+markers",
                name="RRMaj" if method == "rrmaj" else "MAJ",
            ),
            row=2,
            col=1,
        )
    fig.update_yaxes(range=[0, 1.02], automargin=True)
    fig.update_layout(height=560, margin={"l": 50, "r": 20, "t": 40, "b": 40})
    return legend_below(fig, rows=2)


def fit_text(record: dict) -> str:
    """The fitted parameters in words, or why no bound follows from them."""

    def show(rate):
        return "–" if rate is None else f"{rate[0]:+.4f} [{rate[1]:+.4f}, {rate[2]:+.4f}]"

    bound = record["rho_max"]
    verdict = (
        f"rho_max(K = {record['k']}) = **{bound:.1%}**"
        if bound is not None
        else "no bound: the honest turns did not lower V (gamma_H outside (0, 1))"
    )
    text = (
        f"**{record['ensemble']} · {record['task']} · K = {record['k']}**: gamma_H = "
        f"{show(record['gamma_h'])}, alpha = {show(record['alpha'])} (95% bootstrap "
        f"intervals); {verdict}."
    )
    return text + _collapse_words(record)


def _collapse_words(record: dict) -> str:
    """Why a run can collapse inside its own fitted bound, said where it does: the bound is
    built from the rates of the tokens that were written."""
    bound, points = record["rho_max"], sorted(record["observed"], key=lambda p: p["rho"])
    clean = next((p for p in points if p["rho"] == 0), None)
    inside = [p for p in points if 0 < p["rho"] < (bound or 0)]
    fallen = [p for p in inside if clean and p["rrmaj"] < clean["rrmaj"] / 2]
    if not fallen:
        return ""
    first = fallen[0]
    return (
        f"\n\nThe run itself collapses inside that bound: RRMaj {first['rrmaj']:.1%} at rho = "
        f"{first['rho']:.1f} ({first['label']}) against {clean['rrmaj']:.1%} with nobody "
        "corrupted (the plot's right panel: the report's main table, pool-sampled at M*). The bound is a worst case over the tokens that are written, from per-token "
        "rates; it does not count trajectories an injected agent ends at once, before any "
        "honest turn, which is how these runs fail (docs/evidence.md, *Why no rescue*). So the "
        "fitted rho_max describes the written text, not the vote."
    )


def _load_fit(path: str, which: float):
    try:
        records = load_fit_records(Path(__file__).resolve().parents[1] / path)
        if not records:
            raise RRError(f"{path} holds no RR fit")
        record = records[min(int(which or 0), len(records) - 1)]
        return fit_figure(record), fit_text(record)
    except (RRError, TypeError, ValueError) as exc:
        if not isinstance(exc, RRError):
            exc = RRError(f"{path} is not a theory fit this tab can show")
        raise user_error(exc, "load the fit") from None


def _fitted_section() -> None:
    fits = committed_fits()
    if not fits:
        return
    gr.Markdown(FITTED)
    with gr.Row():
        path = gr.Dropdown(fits, value=fits[0], label="theory_fit.json of a metered report")
        which = gr.Number(value=0, precision=0, label="fit # (model and task) in the file")
    first = load_fit_records(Path(__file__).resolve().parents[1] / fits[0])[:1]
    plot = gr.Plot(
        fit_figure(first[0]) if first else None, label="fitted bound and observed accuracy"
    )
    text = gr.Markdown(fit_text(first[0]) if first else "", elem_id="rr-theory-fit")
    for trigger in (path, which):
        trigger.change(_load_fit, [path, which], [plot, text], api_visibility="private")


def build_theory_tab() -> None:
    """Add the theory plot and its sliders to the enclosing Blocks/Tab."""
    gr.Markdown(EXPLAINER)
    with gr.Row():
        gamma = gr.Slider(
            0.001, 0.2, value=PAPER_GAMMA_H, step=0.001, label="gamma_H (honest recovery per token)"
        )
        drift = gr.Slider(
            0.0,
            3.0,
            value=PAPER_DRIFT * 100,
            step=0.05,
            label="drift alpha (% per corrupted token)",
        )
    with gr.Row():
        k = gr.Slider(1, 2000, value=PAPER_K, step=1, label="K (tokens per turn) to inspect")
        k_max = gr.Slider(50, 5000, value=1000, step=50, label="plot K up to")
    plot = gr.Plot(bound_figure(PAPER_GAMMA_H, PAPER_DRIFT, PAPER_K, 1000), label="rho_max(K)")
    text = gr.Markdown(bound_text(PAPER_GAMMA_H, PAPER_DRIFT, PAPER_K), elem_id="rr-theory-text")
    inputs = [gamma, drift, k, k_max]
    for slider in inputs:
        public = slider is gamma  # one documented endpoint, /theory, for clients and tests
        slider.change(
            _update,
            inputs,
            [plot, text],
            api_name="theory" if public else None,
            api_visibility="public" if public else "private",
            concurrency_limit=None,  # cheap: never waits behind a model run
        )
    _fitted_section()
