"""The page's layout beyond the Arena's first screen: tables that keep their words whole and
scroll sideways with a visible hint, and plots whose legends sit under them, so that every tab
reads on a 390 px phone as on a laptop (`tests/ui/test_phone_browser.py` measures it)."""

from __future__ import annotations

import plotly.graph_objects as go

# Markdown tables (About's results, Experiments' notes): whole words, one header line, and a
# sideways scroll with a shadow at the edge that has more (the "scroll shadows" of CSS). Every
# dataframe likewise breaks cells between words only.
PAGE_CSS = """
.prose table {
  display: block; max-width: 100%; overflow-x: auto; border-collapse: collapse;
  background:
    linear-gradient(to right, #fff 30%, rgba(255,255,255,0)) left / 24px 100% no-repeat local,
    linear-gradient(to left, #fff 30%, rgba(255,255,255,0)) right / 24px 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(0,0,0,.22), rgba(0,0,0,0)) left / 10px 100%
      no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(0,0,0,.22), rgba(0,0,0,0)) right / 10px 100%
      no-repeat scroll;
}
.prose th { white-space: nowrap; }
.prose th, .prose td, .table-wrap td, .table-wrap th, .table-wrap td *, .table-wrap th * {
  word-break: normal !important; overflow-wrap: normal !important; hyphens: manual;
}
.table-wrap { overflow-x: auto !important; }
@media (max-width: 640px) {
  .prose td { white-space: nowrap; }
  input[role="combobox"] { text-overflow: ellipsis; padding-right: 28px !important; }
}
"""


def legend_below(fig: go.Figure, rows: int = 1) -> go.Figure:
    """The figure with its legend under the plot and its axis title, anchored to the bottom of
    the figure: beside the plot, a phone's narrow plot is covered by it. The figure grows by
    `rows` legend lines (a phone shows about one entry a line)."""
    line = 21  # px of one legend line
    height = (fig.layout.height or 450) + line * rows
    fig.update_layout(
        height=height,
        legend={
            "orientation": "h", "x": 0, "xanchor": "left", "y": 0, "yanchor": "bottom",
            "yref": "container",
        },
        margin={"b": 75 + line * rows},
    )  # fmt: skip
    return fig


def header_widths(headers: list[str], wide: dict[str, int] | None = None) -> list[str]:
    """Column widths in px: each header's longest word whole, or what `wide` gives a column
    whose cells run longer (a model name); a table wider than the page scrolls sideways."""
    wide = wide or {}
    return [f"{wide.get(h, round(8.5 * max(len(w) for w in h.split()) + 30))}px" for h in headers]
