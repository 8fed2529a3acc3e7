"""The Arena tab: MAJ and RRMaj on the same question, streamed side by side as tokens arrive.

The run callback reads the controls into an `ArenaRequest`, asks `ui.state.build_run` for the
engine's config, loads the models (showing that it does), then iterates
`run_question(..., interleave=True)`, folds each event into the user's `ArenaState` and re-renders
both panels at most ~10 times a second. Errors reach the user as `gr.Error` messages.
The page opens on a recorded run played back in the same panels (ui.replay): the question, the
line with what that setting's whole run found, and both panels come first, within one screen of
a laptop or a phone (`ARENA_CSS`); the chooser of recordings (ui.arena_chooser) follows, and the
run controls are folded under "Set up your own run".
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr

from rrdemo.agents import ModelSource
from rrdemo.backends.choice import DEFAULT_BACKEND, with_backends
from rrdemo.backends.hardware import gpu_duration, on_gpu
from rrdemo.backends.registry import DEFAULT_MODEL, resolve
from rrdemo.errors import RRError
from rrdemo.gallery import Gallery, load_gallery
from rrdemo.memory import check_memory
from rrdemo.pace import Pace, QuestionWork, question_time
from rrdemo.protocols import run_question
from rrdemo.report.paper.tables import models_text
from rrdemo.seats import parse_agents
from ui import render
from ui.arena_controls import build_controls, question_preview, wire_controls
from ui.errors import plain, user_error
from ui.owners import owned, session_of
from ui.queue_limits import client_of, for_this_client
from ui.render import UPDATE_INTERVAL_S, Throttle
from ui.replay import (
    ReplayControls,
    build_replay,
    opening_frame,
    opening_question,
    opening_request,
    opening_result,
    wire_replay,
)
from ui.state import ARENA_FIELDS, ArenaRequest, ArenaState, build_run
from ui.streams import limited_run

log = logging.getLogger(__name__)


INTRO = (
    "N agents answer one question; c of them are **corrupted** by a prompt injection that "
    "pushes a wrong target answer. **MAJ** votes over N independent answers; **RRMaj** lets the "
    "agents take turns writing K tokens of one shared text, M times, and votes over those."
)
# The phone's one line (the intro above is hidden there to keep the first screen).
INTRO_PHONE = (
    "**MAJ**: each agent answers alone, then they vote. **RRMaj**: they take turns writing one "
    "shared answer, M times, then vote. Some agents are **corrupted**."
)

RECORDINGS_NOTE = (
    "Each setting replays recordings of one condition of a committed run; beside its name is what "
    "the whole run measured: RRMaj - MAJ in points with a bootstrap 95% interval over its "
    "questions (rrdemo.report.paired). A difference counts only when the interval excludes 0, and "
    "only then does a setting where the corrupted agents are a majority say **rescue**. **Run "
    "live** runs the recording's config, question and seed again on the models, but samples "
    "anew: the engine's build and the order in which it decodes (a sweep runs MAJ, then RRMaj; "
    "the Arena interleaves them) change the sampled tokens, so a live run can end otherwise "
    "than the recording; the line above the panels then shows the live outcome, not the "
    "recording's. The current recordings "
    "are of Qwen2.5-Coder-1.5B, an offline model that reasons step by step; on a GPU, type a hub "
    "model of a few billion parameters in **Model (all agents)**, e.g. `Qwen/Qwen2.5-7B-Instruct` "
    f"(the paper used {models_text()})."
)

# The first screen: the question, the result line and both panels fit a 1400 x 900 laptop and
# a 390 x 844 phone; a panel scrolls inside itself rather than pushing the other one down.
ARENA_CSS = """
#rr-intro { font-size: 13px; }
#rr-intro-phone { display: none; }
#rr-question .rr-stem { max-height: 4.6em !important; }
#rr-maj, #rr-rrmaj { max-height: 38vh; overflow-y: auto !important; }
@media (max-width: 640px) {
  .rr-panel .rr-recorded { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
  .rr-panel .rr-legend, .rr-panel .rr-zline, .rr-panel .rr-meter-legend,
  .rr-panel .rr-speakers > div:last-child {
    display: none !important;
  }
  .rr-panel h3 { font-size: 14px !important; }
  #rr-title h2 { font-size: 1.05rem; margin: 0; }
  #rr-intro, #rr-verdict .rr-compute, #rr-verdict .rr-honest-writers, #rr-result .rr-source,
  .rr-panel .rr-subtitle {
    display: none;
  }
  .rr-panel .rr-recorded { font-size: 11px !important; }
  #rr-intro-phone { display: block; }
  #rr-intro-phone, #rr-intro-phone * { font-size: 12px !important; line-height: 1.35 !important; }
  #rr-intro-phone p { margin: 0; }
  div:has(> #rr-verdict), #rr-top, #rr-panels { gap: 8px !important; }
  #rr-result .rr-result, #rr-verdict .rr-verdict-line { font-size: 12px !important; }
  #rr-question .rr-question { font-size: 12px !important; }
  #rr-top, #rr-panels { flex-direction: column !important; }
  #rr-maj, #rr-rrmaj { max-height: 17vh; }
  #rr-question .rr-stem { max-height: 3.1em !important; }
}
"""


def stream_run(
    request: ArenaRequest,
    pool: ModelSource,
    interval: float = UPDATE_INTERVAL_S,
    client: str | None = None,
) -> Iterator[tuple]:
    """Validate, load models, then stream (status, verdict, MAJ, RRMaj, record, state) frames;
    what the run fetches from the hub counts against `client` (`ui.queue_limits.client_of`).

    Raises RRError for the user's mistakes and MemoryError-like errors unchanged; the Gradio
    callback turns both into messages.
    """
    prepared = build_run(request)
    pool = for_this_client(pool, client)  # its hub downloads count against this visitor
    for agent in prepared.config.agents:  # refused names stop here, before anything reads them
        pool.admit(agent.model)
    # The engine the app was started with (`--backend`, env RRDEMO_BACKEND) joins the config.
    prepared = replace(prepared, config=with_backends(prepared.config, pool.preferred_backend))
    check_memory([prepared.config], pool, public=True)  # N x M x L, before anything loads
    state = ArenaState.for_run(request, prepared)
    # Load each distinct model first, saying so: a first load converts the GGUF (20-60 s).
    try:
        for name in pool.ensure(prepared.config.agents):
            state.status = "loading"
            yield render.frame(
                state,
                f"**Loading** model **{name}** (the first load of an offline model takes 20-60 s)…",
            )
    except RRError as exc:  # kept for the status line the failure listener draws
        state.status, state.error = "failed", str(exc)
        raise
    cfg = prepared.config
    setting = render.setting_text(cfg)
    sources = pool.sources()
    if sources:
        used = {resolve(a.model).name for a in cfg.agents}
        origin = ", ".join(f"{n} loaded from: {s}" for n, s in sources.items() if n in used)
        setting += f" · {origin}" if origin else ""
    # the time: expected before, then from the run's own pace, then beside the actual
    pace = Pace(question_time(cfg, prepared.task.name, backend=cfg.agents[0].backend))
    work = QuestionWork(cfg, prepared.task.name)
    yield render.frame(
        state, f"**Running** MAJ and RRMaj · expected {pace.expected.words()} · {setting}…"
    )
    events = run_question(
        cfg, prepared.question, prepared.task, pool, target=prepared.target, interleave=True
    )
    throttle = Throttle(interval)
    try:
        for event in events:
            # Stop (its cancel has not landed yet) or a newer stream: decode no more
            if state.halted:
                break
            state.apply(event)
            work.add(event)
            if throttle.due(force=event.kind in ("decision", "compute_used")):
                left = pace.line(work.done, work.left)
                yield render.frame(
                    state, f"**Running** · {left} · {setting} · {state.events} events…"
                )
    finally:
        events.close()  # stops decoding and frees the KV caches if the user pressed Stop
    yield render.frame(state, f"**Done** · {pace.summary()} · {setting} · {state.events} events")


def _gpu_seconds(request: ArenaRequest, client: str | None = None) -> int:
    """ZeroGPU duration for one run, from the request's N, M, L and K (ZeroGPU passes the run's
    arguments, its `client` too)."""
    n = request.n
    if request.ensemble != "same":
        try:
            n = len(parse_agents(request.agents))
        except RRError:  # the run itself refuses the list, saying why
            n = 1
    return gpu_duration(n, request.m, request.max_tokens, request.k)


def _run_callback(pool: ModelSource):
    # On a ZeroGPU Space the whole run (loading included) holds a GPU; elsewhere this is stream_run.
    # The client key, not the gr.Request, crosses into the GPU worker: a string pickles.
    generate = on_gpu(lambda asked, client: stream_run(asked, pool, client=client), _gpu_seconds)

    def run(request: gr.Request | None, *values):  # Gradio passes the event's request first
        asked = ArenaRequest(**dict(zip(ARENA_FIELDS, values, strict=True)))
        try:  # the run takes the visitor's panels from any recording still playing there
            yield from owned(generate(asked, client_of(request)), session_of(request))
        except Exception as exc:  # the server keeps serving; the user gets one clear line
            raise user_error(exc, "run") from None

    return run


def _about_settings(gallery: Gallery | None) -> None:
    """What each recorded setting is, with its run's outcome, folded."""
    settings = gallery.settings if gallery is not None else ()
    with gr.Accordion("What the recorded settings are", open=False):
        gr.Markdown("\n".join(f"* **{s.label()}**: {s.description}" for s in settings))
        gr.Markdown(RECORDINGS_NOTE)


@dataclass(frozen=True)
class Panels:
    """What a run updates: status, verdict, both panels, the run record and the user's state."""

    question: gr.HTML  # the question the panels show
    result: gr.HTML  # what the recording's whole run found, or "one question" for a live run
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


def _panels(gallery: Gallery | None) -> Panels:
    """The question, the result line, the verdict, both panels and the status, set to the first
    frame of the recording the page opens on, so that it shows on the first paint."""
    opening = opening_frame(gallery)
    status, verdict, maj, rrmaj = opening[:4] if opening else ("", "", None, None)
    with gr.Row(equal_height=False, elem_id="rr-top"):
        question = gr.HTML(opening_question(gallery), elem_id="rr-question", min_width=300)
        result = gr.HTML(opening_result(gallery), elem_id="rr-result", min_width=300)
    verdict = gr.HTML(verdict, elem_id="rr-verdict")
    with gr.Row(equal_height=False, elem_id="rr-panels"):  # one above the other on a phone
        maj = gr.HTML(maj or render.placeholder("MAJ"), elem_id="rr-maj", min_width=300)
        rrmaj = gr.HTML(rrmaj or render.placeholder("RRMaj"), elem_id="rr-rrmaj", min_width=300)
    status = gr.Markdown(status or "Pick a recording or set up a run.", elem_id="rr-status")
    record = gr.JSON(label="summary of the run (no texts)", render=False)
    return Panels(question, result, status, verdict, maj, rrmaj, record, gr.State(None))


def failed_frame(state: ArenaState | None) -> tuple:
    """After a run that could not start (a model that could not be loaded): the status line
    says so in the error's own sentence, where it said "Loading", and the panels are empty; a
    run that failed before its first frame left the panels as they were."""
    if not isinstance(state, ArenaState) or state.status != "failed":
        return tuple(gr.update() for _ in range(7))
    status = f"**Not run**: {plain(state.error or 'the run could not start')} Pick another model or a recording."
    return (
        status, "", render.placeholder("MAJ"), render.placeholder("RRMaj"), state.summary(), state,
        render.live_result_line(state),
    )  # fmt: skip


def stopped_frame(state: ArenaState | None) -> tuple:
    """What Stop shows at once: the run's panels with every unfinished answer saying "stopped"
    and a status line that ends (a finished run or a recording already played stays as it is)."""
    if not isinstance(state, ArenaState) or state.done:
        return tuple(gr.update() for _ in range(6))
    state.stop()
    return render.frame(state, render.stopped_status(state))


def stopped_result(state: ArenaState | None) -> Any:
    """A live run's result line once stopped; a recording's line stays."""
    if not isinstance(state, ArenaState) or state.recorded or not state.stopped:
        return gr.update()
    return render.live_result_line(state)


# Pressing a Run button brings the panels into view (the set-up panel sits below them); the
# event's inputs pass through unchanged.
SHOW_PANELS_JS = (
    "(...inputs) => { document.getElementById('rr-question')?.scrollIntoView({block: 'start'});"
    " return inputs; }"
)


def _wire_runs(
    pool: ModelSource,
    run_button: gr.Button,
    stop_buttons: list[gr.Button],
    controls: list,
    panels: Panels,
    replay: ReplayControls | None,
    recordings: Callable[[Callable], tuple[list, Any]],
) -> None:
    """Run streams a run; `recordings(run)` wires the replays and Run live; every Stop cancels
    any of them and shows the run stopped. A live run replaces the recording's question and
    result line: one question, no finding, and once done what this new sample decided."""
    run = limited_run(_run_callback(pool))  # wall-time limit, paced by the client's reading
    once = {"concurrency_id": "model", "concurrency_limit": 1}  # one generation at a time
    quick = {"queue": False, "api_visibility": "private"}
    asked = ("task", "question_index", "custom_question", "custom_gold")
    question = [controls[ARENA_FIELDS.index(name)] for name in asked]
    shown = [panels.question, panels.result]

    def running(task, index, text, gold) -> tuple[str, str]:
        return question_preview(task, index, text, gold), render.live_result_line()

    def outcome(state: ArenaState | None) -> Any:
        """The live run's result line once it ends; a recording that took the panels meanwhile
        keeps its own line."""
        if isinstance(state, ArenaState) and (state.recorded or state.superseded):
            return gr.update()
        return render.live_result_line(state if isinstance(state, ArenaState) else None)

    # First the quick lines, then the run: a trigger's later listeners wait for its earlier
    # ones to finish, and a run streams for minutes.
    run_button.click(running, question, shown, js=SHOW_PANELS_JS, **quick)
    ran = run_button.click(run, controls, panels.outputs, api_name="run", **once)
    ran.success(outcome, panels.state, panels.result, **quick)
    failed = [*panels.outputs, panels.result]
    ran.failure(failed_frame, panels.state, failed, **quick)
    cancellable = [ran]
    replays, live_run = recordings(run)
    cancellable += replays
    if replay is not None and live_run is not None:  # Run live: the recording's question
        replay.run_live.click(lambda: render.live_result_line(), None, panels.result, **quick)
        live_run.success(outcome, panels.state, panels.result, **quick)
        live_run.failure(failed_frame, panels.state, failed, **quick)

    def stopped_again(state: ArenaState | None) -> tuple:
        """The same once more, after the cancel: a frame the run sent as Stop was pressed
        cannot be the last word."""
        return (*stopped_frame(state), stopped_result(state))

    for stop in stop_buttons:
        halted = stop.click(
            stopped_frame, panels.state, panels.outputs, cancels=cancellable, **quick
        )
        halted.then(stopped_again, panels.state, [*panels.outputs, panels.result], **quick)


def _gallery() -> Gallery | None:
    """The recorded runs (rrdemo.gallery); None, logged, when the manifest cannot be read."""
    try:
        return load_gallery()
    except RRError:
        log.exception("the gallery of recorded runs could not be read")
        return None


def build_arena_tab(pool: ModelSource) -> dict[str, gr.components.Component]:
    """Add the arena to the enclosing Blocks/Tab; returns its components by name.

    Top to bottom: one line on what is compared, the question, the result line, the verdict,
    both panels, the status; then the chooser of recordings with Run live and Stop, the
    recordings kept aside, the upload, and "Set up your own run" (every control, folded)."""
    gallery = _gallery()
    gr.Markdown(INTRO, elem_id="rr-intro")
    gr.Markdown(INTRO_PHONE, elem_id="rr-intro-phone")
    panels = _panels(gallery)
    opening = opening_request(gallery)
    backend = getattr(pool, "preferred_backend", DEFAULT_BACKEND)  # the engine runs ask for
    replay = build_replay(gallery, opening, backend) if gallery is not None else None
    with gr.Accordion("Set up your own run", open=False, elem_id="rr-setup"):
        controls = build_controls(opening or ArenaRequest(model=DEFAULT_MODEL), pool.offered())
        with gr.Row():
            run_button = gr.Button("Run MAJ vs RRMaj", variant="primary", elem_id="rr-run")
            setup_stop = gr.Button("Stop", variant="stop", elem_id="rr-stop-setup")
    stop_buttons = [setup_stop] + ([replay.stop] if replay is not None else [])
    _about_settings(gallery)
    with gr.Accordion("Run record (JSON)", open=False):
        panels.record.render()

    def recordings(run: Callable) -> tuple[list, Any]:
        if replay is None:
            return [], None
        shown = [panels.question, panels.result]
        outputs = panels.outputs
        return wire_replay(gallery, replay, controls.inputs, shown, outputs, run, backend=backend)

    _wire_runs(pool, run_button, stop_buttons, controls.inputs, panels, replay, recordings)
    wire_controls(controls)
    return {
        **controls.fields,
        "run": run_button,
        "stop": stop_buttons[-1],
        "status": panels.status,
        "maj": panels.maj,
        "rrmaj": panels.rrmaj,
        "result": panels.result,
    }
