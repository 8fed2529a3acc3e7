"""The Theory tab: the bound plotted and described for the sliders' values (bad values get a
message), and the fitted section: committed fits are found, drawn and described."""

from __future__ import annotations

import json

import gradio as gr
import pytest

from rrdemo.theory import PAPER_DRIFT, PAPER_GAMMA_H, largest_k, stability_bound
from ui.theory_tab import _update, bound_figure, bound_text, committed_fits, fit_figure, fit_text

RECORD = {
    "ensemble": "qwen2.5-coder-0.5b",
    "task": "logic3",
    "k": 16,
    "gamma_h": [0.03, 0.02, 0.04],
    "alpha": [0.004, 0.001, 0.007],
    "rho_max": 0.9,
    "observed": [
        {"rho": 0.0, "label": "0c5t", "rrmaj": 0.4, "maj": 0.4},
        {"rho": 0.6, "label": "3c2t", "rrmaj": 0.2, "maj": 0.0},
    ],
}


def test_committed_fits_are_found_under_report_folders(tmp_path):
    report = tmp_path / "assets" / "run" / "report"
    report.mkdir(parents=True)
    (report / "theory_fit.json").write_text(json.dumps([RECORD]))
    assert committed_fits(tmp_path / "assets") == ["assets/run/report/theory_fit.json"]


def test_the_figure_shows_the_bound_beside_the_observed_accuracy():
    fig = fit_figure(RECORD)
    names = [t.name for t in fig.data]
    assert names == ["rho_max(K)", "K = 16", "RRMaj", "MAJ"]
    assert list(fig.data[2].x) == [0.0, 0.6] and list(fig.data[2].y) == [0.4, 0.2]
    assert "rho_max(K = 16) = **90.0%**" in fit_text(RECORD)
    no_pull = {**RECORD, "gamma_h": [-0.01, -0.02, 0.0], "rho_max": None}
    assert [t.name for t in fit_figure(no_pull).data] == ["RRMaj", "MAJ"]
    assert "no bound" in fit_text(no_pull)


def test_the_plot_is_the_bound_over_k_with_the_chosen_k_marked():
    fig = bound_figure(PAPER_GAMMA_H, PAPER_DRIFT, 100, 1000)
    curve, chosen = fig.data
    assert curve.x[0] == 1 and 990 < curve.x[-1] <= 1000 and list(curve.x) == sorted(curve.x)
    for k, rho in list(zip(curve.x, curve.y, strict=True))[::50]:
        assert rho == stability_bound(PAPER_GAMMA_H, PAPER_DRIFT, k).rho_max
    assert list(chosen.x) == [100]
    assert list(chosen.y) == [stability_bound(PAPER_GAMMA_H, PAPER_DRIFT, 100).rho_max]
    assert sorted(shape.y0 for shape in fig.layout.shapes) == [0.5, 0.6]  # majority and 3c2t


def test_the_text_gives_both_terms_and_the_longest_turns():
    bound = stability_bound(PAPER_GAMMA_H, PAPER_DRIFT, 100)
    text = bound_text(PAPER_GAMMA_H, PAPER_DRIFT, 100)
    assert f"R_H(K) = **{bound.restoration:.3f}**" in text
    assert f"Delta V_C(K) = **{bound.adversarial:.3f}**" in text
    assert f"rho_max = {bound.rho_max:.1%}" in text
    assert f"rho_max > 0.5: K = {largest_k(PAPER_GAMMA_H, PAPER_DRIFT, 0.5)}" in text
    hopeless = bound_text(0.001, 0.5, 10)  # drift far above restoration: no turn survives
    assert "does not reach a corrupted majority" in hopeless
    assert "none (even K = 1 fails)" in hopeless
    assert "the bound guarantees RR stays stable while fewer than 66.0%" in text
    assert "RR the bound" not in text
    far = bound_text(PAPER_GAMMA_H, PAPER_DRIFT, 2000)  # the drift has compounded past 0.1%
    assert "0.0%" not in far and "rho_max = below 0.1%" in far
    assert "the bound guarantees nothing here" in far


def test_a_run_that_collapses_inside_its_fitted_bound_says_why() -> None:
    text = fit_text(RECORD)  # RRMaj 40% -> 20% at rho 0.6: not below half
    assert "collapses" not in text
    fallen = {**RECORD, "observed": [*RECORD["observed"][:1],
                                     {"rho": 0.6, "label": "3c2t", "rrmaj": 0.1, "maj": 0.0}]}  # fmt: skip
    text = fit_text(fallen)
    assert "collapses inside that bound: RRMaj 10.0% at rho = 0.6 (3c2t)" in text
    assert "does not count trajectories an injected agent ends at once" in text


def test_the_sliders_values_are_read_and_bad_ones_get_a_message():
    fig, text = _update(PAPER_GAMMA_H, 100 * PAPER_DRIFT, 100.0, 50.0)  # K above the plot's range
    assert fig.data[0].x[-1] == 100 and text == bound_text(PAPER_GAMMA_H, PAPER_DRIFT, 100)
    with pytest.raises(gr.Error, match="finite numbers"):
        _update(PAPER_GAMMA_H, "lots", 100, 1000)
    with pytest.raises(gr.Error, match="gamma_H"):
        _update(1.5, 0.4, 100, 1000)  # the bound's own message
