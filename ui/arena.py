"""The Arena tab: MAJ and RRMaj on the same question, streamed side by side as tokens arrive.

The run callback reads the controls into an `ArenaRequest`, asks `ui.state.build_run` for the
engine's config, loads the models (showing that it does), then iterates
`run_question(..., interleave=True)`, folds each event into the user's `ArenaState` and re-renders
both panels at most ~10 times a second. Errors reach the user as `gr.Error` messages.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, replace

import gradio as gr

from rrdemo.agents import ModelSource
from rrdemo.config import LATER_FIELDS
from rrdemo.engines.choice import with_backends
from rrdemo.engines.registry import DEFAULT_MODEL, resolve
from rrdemo.hardware import gpu_duration, on_gpu
from rrdemo.protocols import run_question
from ui import render
from ui.arena_controls import build_controls, wire_controls
from ui.errors import user_error
from ui.state import ARENA_FIELDS, ArenaRequest, ArenaState, build_run

UPDATE_INTERVAL_S = (
    0.1  # at most ~10 renders a second: the browser keeps up, the page never freezes
)


@dataclass(frozen=True)
class Preset:
    """A one-click setting that reproduces one of the paper's headline cases."""

    label: str
    description: str
    request: ArenaRequest


PRESETS: tuple[Preset, ...] = (
    Preset(
        "Strong 3c2t · Logic3",
        "The consensus trap: 3 of 5 agents are told to pick a wrong option (rho = 0.6). MAJ follows "
        "the corrupted majority; RR lets the honest agents' turns pull the shared text back.",
        ArenaRequest(n=5, c=3, strength="strong", task="logic3", question_index=0),
    ),
    Preset(
        "Moderate 1c4t · GSM8K",
        "A single advisory corruption (rho = 0.2): the robustness tax side of the trade-off.",
        ArenaRequest(n=5, c=1, strength="moderate", task="gsm8k", question_index=0),
    ),
    Preset(
        "Ceiling 0c5t · Logic3",
        "No corruption: how well the ensemble does on its own (the clean ceiling).",
        ArenaRequest(n=5, c=0, strength="none", task="logic3", question_index=0),
    ),
    Preset(
        "Strong 4c1t · AQuA",
        "A heavy corrupted majority (rho = 0.8) on multiple-choice algebra.",
        ArenaRequest(n=5, c=4, strength="strong", task="aqua", question_index=0),
    ),
)


PRESET_MODEL_NOTE = (
    "The presets run the selected model. The offline models (SmolLM2-135M, Gemma-3-270M) show how "
    "the protocols work but not the rescue itself: no setting we measured puts RRMaj above MAJ "
    "beyond the intervals with them (About tab). To see the effect, type a hub model of a few "
    "billion parameters in **Model (all agents)** on a GPU, e.g. `Qwen/Qwen2.5-7B-Instruct` "
    "(the paper used Qwen2.5-32B and larger)."
)


class Throttle:
    """True at most once per `interval` seconds (and always for `force`)."""

    def __init__(self, interval: float = UPDATE_INTERVAL_S) -> None:
        self.interval = interval
        self.last = float("-inf")

    def due(self, force: bool = False) -> bool:
        now = time.monotonic()
        if force or now - self.last >= self.interval:
            self.last = now
            return True
        return False


def _frame(state: ArenaState, status: str) -> tuple:
    state.updates += 1
    return (
        status,
        render.render_verdict(state),
        render.render_maj(state),
        render.render_rrmaj(state),
        state.summary(),
        state,
    )


def stream_run(
    request: ArenaRequest, pool: ModelSource, interval: float = UPDATE_INTERVAL_S
) -> Iterator[tuple]:
    """Validate, load models, then stream (status, verdict, MAJ, RRMaj, record, state) frames.

    Raises RRError for the user's mistakes and MemoryError-like errors unchanged; the Gradio
    callback turns both into messages.
    """
    prepared = build_run(request)
    for agent in prepared.config.agents:  # refused names stop here, before anything reads them
        pool.admit(agent.model)
    # The engine the app was started with (`--backend`, env RRDEMO_BACKEND) joins the config.
    prepared = replace(prepared, config=with_backends(prepared.config, pool.preferred_backend))
    state = ArenaState.for_run(request, prepared)
    # Load each distinct model first, saying so: a first load converts the GGUF (20-60 s).
    for name in pool.ensure(prepared.config.agents):
        state.status = "loading"
        yield _frame(
            state,
            f"**Loading** model **{name}** (the first load of an offline model takes 20-60 s)…",
        )
    cfg = prepared.config
    setting = (
        f"{cfg.label}, rho = {cfg.rho:.2f}, {cfg.strength} · K = {cfg.k}, "
        f"M = {cfg.n_trajectories}, L = {cfg.max_tokens}, {cfg.order} order"
    )
    beyond = [  # settings beyond the paper (docs/adversary.md), named when not the paper's default
        f"{name.replace('_', ' ')} {getattr(cfg, name)}"
        for name, default in LATER_FIELDS.items()
        if getattr(cfg, name) != default
    ]
    setting += "".join(f", {text}" for text in beyond)
    sources = pool.sources()
    if sources:
        used = {resolve(a.model).name for a in cfg.agents}
        origin = ", ".join(f"{n} loaded from: {s}" for n, s in sources.items() if n in used)
        setting += f" · {origin}" if origin else ""
    yield _frame(state, f"**Running** MAJ and RRMaj · {setting}…")
    events = run_question(
        cfg, prepared.question, prepared.task, pool, target=prepared.target, interleave=True
    )
    throttle = Throttle(interval)
    try:
        for event in events:
            state.apply(event)
            if throttle.due(force=event.kind in ("decision", "compute_used")):
                yield _frame(state, f"**Running** · {setting} · {state.events} events…")
    finally:
        events.close()  # stops decoding and frees the KV caches if the user pressed Stop
    yield _frame(state, f"**Done** · {setting} · {state.events} events")


def _gpu_seconds(request: ArenaRequest) -> int:
    """ZeroGPU duration for one run, from the request's N, M, L and K."""
    n = request.n if request.ensemble == "same" else max(1, len(request.agents.splitlines()))
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


def _intro() -> list[gr.Button]:
    """What the Arena shows, and one button per preset."""
    gr.Markdown(
        "N agents answer one question; c of them are **corrupted** by a prompt injection that "
        "pushes a wrong target answer. **MAJ** votes over N independent answers; **RRMaj** lets "
        "the agents take turns writing K tokens of one shared text, M times, and votes over those."
    )
    with gr.Row():
        buttons = [
            gr.Button(p.label, size="sm", variant="secondary", elem_id=f"rr-preset-{i}")
            for i, p in enumerate(PRESETS)
        ]
    with gr.Accordion("What the presets show", open=False):
        gr.Markdown("\n".join(f"* **{p.label}**: {p.description}" for p in PRESETS))
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


def _panels() -> Panels:
    status = gr.Markdown("Press **Run** or pick a preset.", elem_id="rr-status")
    verdict = gr.HTML("", elem_id="rr-verdict")
    with gr.Row(equal_height=False):
        maj = gr.HTML(render.placeholder("MAJ"), elem_id="rr-maj")
        rrmaj = gr.HTML(render.placeholder("RRMaj"), elem_id="rr-rrmaj")
    with gr.Accordion("Run record (JSON)", open=False):
        record = gr.JSON(label="summary of the run (no texts)")
    return Panels(status, verdict, maj, rrmaj, record, gr.State(None))


def _wire_runs(
    pool: ModelSource,
    run_button: gr.Button,
    stop_button: gr.Button,
    presets: list[gr.Button],
    controls: list,
    outputs: list,
) -> None:
    """Run streams a run; a preset fills the controls, then runs; Stop cancels either."""
    run = _run_callback(pool)
    once = {"concurrency_id": "model", "concurrency_limit": 1}  # one generation at a time
    cancellable = [run_button.click(run, controls, outputs, api_name="run", **once)]
    for button, preset in zip(presets, PRESETS, strict=True):
        values = asdict(replace(preset.request, model=DEFAULT_MODEL))
        filled = button.click(
            lambda v=values: [v[name] for name in ARENA_FIELDS],
            None,
            controls,
            queue=False,
            api_visibility="private",
        )
        cancellable.append(filled.then(run, controls, outputs, api_visibility="private", **once))
    stop_button.click(None, None, None, cancels=cancellable, api_visibility="private")


def build_arena_tab(pool: ModelSource) -> dict[str, gr.components.Component]:
    """Add the arena to the enclosing Blocks/Tab; returns its components by name."""
    presets = _intro()
    controls = build_controls(ArenaRequest(model=DEFAULT_MODEL))
    with gr.Row():
        run_button = gr.Button("Run MAJ vs RRMaj", variant="primary", elem_id="rr-run")
        stop_button = gr.Button("Stop", variant="stop", elem_id="rr-stop")
    panels = _panels()
    _wire_runs(pool, run_button, stop_button, presets, controls.inputs, panels.outputs)
    wire_controls(controls)
    return {
        **controls.fields,
        "run": run_button,
        "stop": stop_button,
        "status": panels.status,
        "maj": panels.maj,
        "rrmaj": panels.rrmaj,
    }
