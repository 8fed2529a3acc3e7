"""The About tab: its text comes from ui/about.md with the paper's models filled in."""

from __future__ import annotations

from rrdemo.report.paper.tables import MODEL_IDS
from ui.about import about_markdown, runtime_markdown


def test_about_text_names_the_papers_models_and_leaves_no_placeholder() -> None:
    text = about_markdown()
    assert "{paper_models}" not in text
    assert all(name in text for name in MODEL_IDS)
    assert "truthful" not in text


def test_runtime_panel_without_a_pool_says_nothing_is_loaded() -> None:
    text = runtime_markdown(None)
    assert "none loaded yet" in text and "**Benchmarks**" in text
