"""The plots: accuracy against rho (lines as given, in %), the report's rho, M and K plots built
from their points, and the PNG export's fallbacks."""

from __future__ import annotations

import sys

import pytest

from rrdemo.report import figures
from rrdemo.report.figures import (
    METHOD_COLOURS,
    RhoLine,
    accuracy_rho_figure,
    k_figure,
    rho_curve_figure,
    scaling_figure,
    write_png,
)
from rrdemo.report.tables import KPoint, RhoPoint, ScalingPoint


def _rho_points(tasks, ensemble="m", k=4) -> list[RhoPoint]:
    return [
        RhoPoint(ensemble, "strong", k, task, method, c / 5, f"{c}c{5 - c}t", acc, acc, acc)
        for task in tasks
        for method, acc in (("MAJ", 0.2), ("RRMaj", 0.6))
        for c in (0, 3, 5)
    ]


def test_lines_are_drawn_in_percent_with_their_methods_style_unless_given():
    lines = [
        RhoLine("MAJ run", "MAJ", [0.0, 0.5, 1.0], [1.0, None, 0.25], group="run"),
        RhoLine("RRMaj run", "RRMaj", [0.0, 1.0], [0.5, 0.125], colour="#000000", dash="dot"),
    ]
    fig = accuracy_rho_figure(lines, "title", legend_title="who")
    maj, rr = fig.data
    assert list(maj.y) == [100.0, None, 25.0] and list(rr.y) == [50.0, 12.5]
    assert (maj.line.color, maj.line.dash, maj.legendgroup) == (
        METHOD_COLOURS["MAJ"],
        "dash",
        "run",
    )
    assert (rr.line.color, rr.line.dash) == ("#000000", "dot")
    assert [shape.x0 for shape in fig.layout.shapes] == [0.5]  # the majority line
    assert (fig.layout.title.text, fig.layout.legend.title.text) == ("title", "who")


def test_the_report_rho_plot_draws_the_mean_bold_and_each_dataset_thin():
    fig = rho_curve_figure(_rho_points(("all", "gsm8k", "logic3")))
    assert len(fig.data) == 3 * 2  # (mean, two datasets) x (MAJ, RRMaj)
    bold = [t for t in fig.data if t.line.width == 3]
    assert sorted(t.name for t in bold) == ["MAJ (mean)", "RRMaj (mean)"]
    assert all(t.line.dash == "solid" for t in bold)
    assert all(t.line.dash != "solid" and t.line.width < 3 for t in fig.data if t not in bold)
    rr_mean = next(t for t in bold if t.name == "RRMaj (mean)")
    assert list(rr_mean.x) == [0.0, 0.6, 1.0] and list(rr_mean.y) == [60.0] * 3


def test_one_dataset_is_its_own_mean_and_several_settings_are_named_in_the_legend():
    single = rho_curve_figure(_rho_points(("all", "gsm8k")))
    assert [t.name for t in single.data] == ["MAJ (gsm8k)", "RRMaj (gsm8k)"]
    assert all(t.line.width == 3 for t in single.data)
    two = rho_curve_figure(_rho_points(("all", "gsm8k"), k=4) + _rho_points(("all", "gsm8k"), k=8))
    assert {t.name.split(" · ")[1] for t in two.data} == {"m, strong, K=4", "m, strong, K=8"}


def test_the_m_plot_has_a_line_per_method_over_the_mean_of_datasets_sorted_by_m():
    points = [
        ScalingPoint("m", "strong", 4, "3c2t", task, method, m, mean, 0.0)
        for task in ("all", "gsm8k")
        for method, mean in (("MAJ", 0.25), ("RRMaj", 0.75), ("Delta", 0.5))
        for m in (5, 1, 3)
    ]
    fig = scaling_figure(points)
    assert [t.name for t in fig.data] == ["MAJ 3c2t (strong, K=4)", "RRMaj 3c2t (strong, K=4)"]
    assert [list(t.x) for t in fig.data] == [[1, 3, 5]] * 2
    assert [list(t.y) for t in fig.data] == [[25.0] * 3, [75.0] * 3]


def test_the_k_plot_is_rrmaj_against_k_on_a_log_axis():
    points = [
        KPoint("m", "strong", "2c1t", task, k, rr, 0.1)
        for task, rr in (("all", 0.5), ("logic3", 0.25))
        for k in (100, 10, 30)
    ]
    fig = k_figure(points)
    assert fig.layout.xaxis.type == "log"
    assert [t.name for t in fig.data] == ["AVG 2c1t (strong)", "logic3 2c1t (strong)"]
    assert [list(t.x) for t in fig.data] == [[10, 30, 100]] * 2
    assert [set(t.y) for t in fig.data] == [{50.0}, {25.0}]


def test_without_a_png_engine_nothing_is_written_and_the_reason_is_returned(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "kaleido", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    path = tmp_path / "rho.png"
    how = write_png(rho_curve_figure(_rho_points(("all",))), path)
    assert how.startswith("no PNG (kaleido failed: ") and "matplotlib is not installed" in how
    assert not path.exists()


def test_kaleido_gets_a_system_browser_unless_the_user_named_one(monkeypatch):
    monkeypatch.delenv("BROWSER_PATH", raising=False)
    monkeypatch.setattr(figures.shutil, "which", {"chromium": "/usr/bin/chromium"}.get)
    assert figures._browser() == "/usr/bin/chromium"
    monkeypatch.setattr(figures.shutil, "which", lambda name: None)
    assert figures._browser() is None
    monkeypatch.setenv("BROWSER_PATH", "/opt/chrome")
    monkeypatch.setattr(figures.shutil, "which", lambda name: pytest.fail("looked anyway"))
    assert figures._browser() is None  # kaleido honours BROWSER_PATH itself
