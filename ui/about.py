"""The About tab: what the demo shows, the paper, what the offline models can and cannot do, and
where this run's hardware, models and benchmarks come from."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from rrdemo.agents import ModelSource
from rrdemo.backends.hardware import describe_hardware, on_space
from rrdemo.report.paper.tables import models_text
from rrdemo.tasks.data import DATASETS, benchmark_source

# where the forest plot of the pooled evidence stands in the About text, and the plot
FOREST_MARK = "<!-- forest plot -->"
FOREST_PNG = (
    Path(__file__).resolve().parents[1] / "assets" / "evidence_pool" / "report" / "forest.png"
)


def about_markdown() -> str:
    """The About text (ui/about.md), with the paper's model list filled in."""
    text = (Path(__file__).parent / "about.md").read_text(encoding="utf-8")
    return text.replace("{paper_models}", models_text())


def runtime_markdown(pool: ModelSource | None) -> str:
    """Hardware, and where each loaded model and each benchmark comes from."""
    sources = pool.sources() if pool is not None else {}
    models = (
        "\n".join(f"* {name}: loaded from: {source}" for name, source in sources.items())
        or "* none loaded yet (the default model loads in the background at start)"
    )
    data = ", ".join(f"{name}: {benchmark_source(name)}" for name in DATASETS)
    where = "a Hugging Face Space" if on_space() else "a local machine"
    return (
        f"### This run\n\n**Hardware:** {describe_hardware()} · on {where}\n\n"
        f"**Models** (loaded from: shipped file | hub | local folder):\n{models}\n\n"
        f"**Benchmarks** (read from: shipped file | hub): {data}"
    )


def build_about_tab(pool: ModelSource | None = None) -> None:
    """Add the about text, the forest plot of the pooled evidence (the committed PNG of
    `assets/evidence_pool`) and the runtime panel (refreshed on page load) to the enclosing Tab."""
    before, _, after = about_markdown().partition(FOREST_MARK)
    gr.Markdown(before, elem_id="rr-about")
    if after and FOREST_PNG.is_file():
        gr.Image(
            str(FOREST_PNG),
            label="RRMaj - MAJ at 3c2t: each evidence run and the pool (95% intervals), beside "
            "the paper's models (open points)",
            interactive=False,
            elem_id="rr-forest",
        )
    gr.Markdown(after)
    runtime = gr.Markdown(elem_id="rr-runtime")
    refresh = gr.Button("Refresh", size="sm")
    refresh.click(lambda: runtime_markdown(pool), None, runtime, api_name="runtime", queue=False)
    context = gr.context.Context.root_block
    if context is not None:
        context.load(lambda: runtime_markdown(pool), None, runtime, api_visibility="private")
