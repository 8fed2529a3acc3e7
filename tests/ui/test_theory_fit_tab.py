"""The Theory tab's fitted section: committed fits are found, drawn and described."""

from __future__ import annotations

import json

from ui.theory_tab import committed_fits, fit_figure, fit_text

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
