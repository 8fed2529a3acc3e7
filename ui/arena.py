"""The Arena tab: MAJ and RRMaj on the same question, streamed side by side as tokens arrive.

The run callback reads the controls into an `ArenaRequest`, asks `ui.state.build_run` for the
engine's config, loads the models (showing that it does), then iterates
`run_question(..., interleave=True)`, folds each event into the user's `ArenaState` and re-renders
both panels at most ~10 times a second. Errors reach the user as `gr.Error` messages.
The page opens on a recorded run played back in the same panels (ui.replay); the presets are the
settings of the gallery of recordings (rrdemo.gallery), and **Run live** runs one on the models.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import gradio as gr

from rrdemo.agents import ModelSource
from rrdemo.backends.choice import with_backends
from rrdemo.backends.hardware import gpu_duration, on_gpu
from rrdemo.backends.registry import DEFAULT_MODEL, resolve
from rrdemo.errors import RRError
from rrdemo.gallery import Gallery, load_gallery
from rrdemo.limits import check_memory
from rrdemo.protocols import run_question
from rrdemo.report.paper.tables import models_text
from rrdemo.seats import parse_agents
from ui import render
from ui.arena_controls import build_controls, wire_controls
from ui.errors import user_error
from ui.queue_limits import for_this_client
from ui.render import UPDATE_INTERVAL_S, Throttle
from ui.replay import (
    build_replay,
    gallery_choices,
    opening_frame,
    opening_request,
    wire_replay,
)
from ui.state import ARENA_FIELDS, ArenaRequest, ArenaState, build_run

log = logging.getLogger(__name__)


PRESET_MODEL_NOTE = (
    "Each preset replays the first recorded run of its setting; **Run live** runs it again on the "
    "models with the same config and seed. The first presets are recordings of "
    "Qwen2.5-Coder-1.5B, an offline model that reasons step by step: its agents solve some "
    "problems, the injection moves them, and RR trajectories mix honest and corrupted writers. "
    "Our sweep with it is partial (100 of 600 units) and shows no rescue beyond its intervals yet "
    "(About tab). SmolLM2-135M and Gemma-3-270M show how the protocols work, not the rescue. On a "
    "GPU, type a hub model of a few billion parameters in **Model (all agents)**, e.g. "
    f"`Qwen/Qwen2.5-7B-Instruct` (the paper used {models_text()})."
)


def stream_run(
    request: ArenaRequest, pool: ModelSource, interval: float = UPDATE_INTERVAL_S
) -> Iterator[tuple]:
    """Validate, load models, then stream (status, verdict, MAJ, RRMaj, record, state) frames.

    Raises RRError for the user's mistakes and MemoryError-like errors unchanged; the Gradio
    callback turns both into messages.
    """
    prepared = build_run(request)
    pool = for_this_client(pool)  # what it fetches from the hub counts against this visitor
    for agent in prepared.config.agents:  # refused names stop here, before anything reads them
        pool.admit(agent.model)
    # The engine the app was started with (`--backend`, env RRDEMO_BACKEND) joins the config.
    prepared = replace(prepared, config=with_backends(prepared.config, pool.preferred_backend))
    check_memory([prepared.config], pool, public=True)  # N x M x L, before anything loads
    state = ArenaState.for_run(request, prepared)
    # Load each distinct model first, saying so: a first load converts the GGUF (20-60 s).
    for name in pool.ensure(prepared.config.agents):
        state.status = "loading"
        yield render.frame(
            state,
            f"**Loading** model **{name}** (the first load of an offline model takes 20-60 s)…",
        )
    cfg = prepared.config
    setting = render.setting_text(cfg)
    sources = pool.sources()
    if sources:
        used = {resolve(a.model).name for a in cfg.agents}
        origin = ", ".join(f"{n} loaded from: {s}" for n, s in sources.items() if n in used)
        setting += f" · {origin}" if origin else ""
    yield render.frame(state, f"**Running** MAJ and RRMaj · {setting}…")
    events = run_question(
        cfg, prepared.question, prepared.task, pool, target=prepared.target, interleave=True
    )
    throttle = Throttle(interval)
    try:
        for event in events:
            state.apply(event)
            if throttle.due(force=event.kind in ("decision", "compute_used")):
                yield render.frame(state, f"**Running** · {setting} · {state.events} events…")
    finally:
        events.close()  # stops decoding and frees the KV caches if the user pressed Stop
    yield render.frame(state, f"**Done** · {setting} · {state.events} events")


def _gpu_seconds(request: ArenaRequest) -> int:
    """ZeroGPU duration for one run, from the request's N, M, L and K."""
    n = request.n
    if request.ensemble != "same":
        try:
            n = len(parse_agents(request.agents))
        except RRError:  # the run itself refuses the list, saying why
            n = 1
    return gpu_duration(n, request.m, request.max_tokens, request.k)


def _run_callback(pool: ModelSource):
    # On a ZeroGPU Space the whole run (loading included) holds a GPU; elsewhere this is stream_run.
    generate = on_gpu(lambda request: stream_run(request, pool), _gpu_seconds)

    def run(*values):
        request = ArenaRequest(**dict(zip(ARENA_FIELDS, values, strict=True)))
        try:
            yield from generate(request)
        except Exception as exc:  # the server keeps serving; the user gets one clear line
            raise user_error(exc, "run") from None

    return run


def _intro(gallery: Gallery | None) -> list[gr.Button]:
    """What the Arena shows, and one button per recorded setting of the gallery (its presets)."""
    gr.Markdown(
        "N agents answer one question; c of them are **corrupted** by a prompt injection that "
        "pushes a wrong target answer. **MAJ** votes over N independent answers; **RRMaj** lets "
        "the agents take turns writing K tokens of one shared text, M times, and votes over those."
    )
    settings = gallery.settings if gallery is not None else ()
    with gr.Row():
        buttons = [
            gr.Button(s.name, size="sm", variant="secondary", elem_id=f"rr-preset-{i}")
            for i, s in enumerate(settings)
        ]
    with gr.Accordion("What the presets show", open=False):
        gr.Markdown("\n".join(f"* **{s.name}**: {s.description}" for s in settings))
        gr.Markdown(PRESET_MODEL_NOTE)
    return buttons


@dataclass(frozen=True)
class Panels:
    """What a run updates: status, verdict, both panels, the run record and the user's state."""

    status: gr.Markdown
    verdict: gr.HTML
    maj: gr.HTML
    rrmaj: gr.HTML
    record: gr.JSON
    state: gr.State

    @property
    def outputs(self) -> list:
        """In the order `stream_run` yields them."""
        return [self.status, self.verdict, self.maj, self.rrmaj, self.record, self.state]


def _panels(opening: tuple | None) -> Panels:
    """The status, verdict and panels; `opening` is the first frame of the recording the page
    opens on, drawn into the page itself so that "Recorded" shows on the first paint."""
    status, verdict, maj, rrmaj = opening[:4] if opening else ("", "", None, None)
    status = gr.Markdown(status or "Pick a preset or press **Run**.", elem_id="rr-status")
    verdict = gr.HTML(verdict, elem_id="rr-verdict")
    with gr.Row(equal_height=False):
        maj = gr.HTML(maj or render.placeholder("MAJ"), elem_id="rr-maj")
        rrmaj = gr.HTML(rrmaj or render.placeholder("RRMaj"), elem_id="rr-rrmaj")
    with gr.Accordion("Run record (JSON)", open=False):
        record = gr.JSON(label="summary of the run (no texts)")
    return Panels(status, verdict, maj, rrmaj, record, gr.State(None))


def _wire_runs(
    pool: ModelSource,
    run_button: gr.Button,
    stop_button: gr.Button,
    controls: list,
    outputs: list,
    recordings: Callable[[Callable], list],
) -> None:
    """Run streams a run; `recordings(run)` wires the replays and Run live; Stop cancels any."""
    run = _run_callback(pool)
    once = {"concurrency_id": "model", "concurrency_limit": 1}  # one generation at a time
    cancellable = [run_button.click(run, controls, outputs, api_name="run", **once)]
    cancellable += recordings(run)
    stop_button.click(None, None, None, cancels=cancellable, api_visibility="private")


def _gallery() -> tuple[Gallery | None, list[tuple[str, str]]]:
    """The recorded runs (rrdemo.gallery); None, logged, when the manifest cannot be read."""
    try:
        gallery = load_gallery()
        return gallery, gallery_choices(gallery)
    except RRError:
        log.exception("the gallery of recorded runs could not be read")
        return None, []


def build_arena_tab(pool: ModelSource) -> dict[str, gr.components.Component]:
    """Add the arena to the enclosing Blocks/Tab; returns its components by name."""
    gallery, choices = _gallery()
    presets = _intro(gallery)
    opening = opening_request(gallery)
    replay = build_replay(gallery, choices, opening) if gallery is not None else None
    controls = build_controls(opening or ArenaRequest(model=DEFAULT_MODEL), pool.offered())
    with gr.Row():
        run_button = gr.Button("Run MAJ vs RRMaj", variant="primary", elem_id="rr-run")
        stop_button = gr.Button("Stop", variant="stop", elem_id="rr-stop")
    panels = _panels(opening_frame(gallery))
    outputs = panels.outputs

    def recordings(run: Callable) -> list:
        if replay is None:
            return []
        return wire_replay(gallery, replay, presets, controls.inputs, outputs, run)

    _wire_runs(pool, run_button, stop_button, controls.inputs, outputs, recordings)
    wire_controls(controls)
    return {
        **controls.fields,
        "run": run_button,
        "stop": stop_button,
        "status": panels.status,
        "maj": panels.maj,
        "rrmaj": panels.rrmaj,
    }
