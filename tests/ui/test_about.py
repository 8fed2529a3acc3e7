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


def test_the_hardware_line_names_the_engine_the_offline_models_run_on() -> None:
    from rrdemo.backends.choice import llama_cpp_missing
    from rrdemo.backends.hardware import describe_hardware

    line = describe_hardware()
    if "CPU" in line:  # on CPU the offline models are 4-bit GGUF files, not float32 weights
        expected = "4-bit GGUF" if llama_cpp_missing() is None else "dequantized to float32"
        assert expected in line and "(models in float32)" not in line
