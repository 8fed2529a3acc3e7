"""The Arena tab: MAJ and RRMaj on the same question, streamed side by side as tokens arrive.

The run callback reads the controls into an `ArenaRequest`, asks `ui.state.build_run` for the
engine's config, loads the models (showing that it does), then iterates
`run_question(..., interleave=True)`, folds each event into the user's `ArenaState` and re-renders
both panels at most ~10 times a second. Errors reach the user as `gr.Error` messages.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Iterator
from dataclasses import asdict, astuple, dataclass, replace
from html import escape

import gradio as gr

from rrdemo.agents import ModelSource
from rrdemo.config import (
    ADVERSARIES,
    EOS_POLICIES,
    LATER_FIELDS,
    ORDERS,
    PROMPT_STYLES,
    STRENGTHS,
)
from rrdemo.corruption import TEMPLATES
from rrdemo.engines.choice import with_backends
from rrdemo.engines.registry import DEFAULT_MODEL, REGISTRY, resolve
from rrdemo.errors import RRError
from rrdemo.hardware import gpu_duration, on_gpu
from rrdemo.protocols import run_question
from rrdemo.speakers import silence_warning
from rrdemo.tasks import get_task, load_questions
from rrdemo.turns import TURN_POLICIES
from ui import render
from ui.choices import SWEEP_TASK_CHOICES
from ui.state import ARENA_FIELDS, CUSTOM, ArenaRequest, ArenaState, build_run, pick_question

log = logging.getLogger(__name__)

UPDATE_INTERVAL_S = (
    0.1  # at most ~10 renders a second: the browser keeps up, the page never freezes
)
MAX_AGENTS_UI = 9


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


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError"


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

    def run(*values):  # type: ignore[no-untyped-def]
        request = ArenaRequest(**dict(zip(ARENA_FIELDS, values, strict=True)))
        try:
            yield from generate(request)
        except RRError as exc:
            raise gr.Error(str(exc), print_exception=False) from None
        except Exception as exc:  # the server keeps serving; the user gets one clear line
            if _is_oom(exc):
                raise gr.Error(
                    "out of memory: lower N, M or L, or pick a smaller model, and try again",
                    print_exception=False,
                ) from None
            log.exception("arena run failed")
            raise gr.Error(f"the run failed ({type(exc).__name__}): {str(exc)[:200]}") from None

    return run


def _preview(task_name: str, index: float, text: str, gold: str) -> str:
    try:
        task, question = pick_question(task_name, int(index or 0), text, gold)
    except RRError as exc:
        return f'<div style="color:#b91c1c">{escape(str(exc))}</div>'
    title = getattr(task, "title", task.name)
    return render.render_question(title, question.text, question.gold, question.qid)


def _random_index(task_name: str) -> int:
    if task_name == CUSTOM:
        return 0
    return random.randrange(len(load_questions(get_task(task_name))))


def _rho_text(ensemble: str, n: float, c: float, agents: str) -> str:
    if ensemble == "per agent":
        lines = [line for line in (agents or "").splitlines() if line.split("#")[0].strip()]
        n = len(lines)
        c = sum("corrupt" in line.lower() for line in lines)
    n, c = int(n or 0), int(c or 0)
    if n < 1 or not 0 <= c <= n:
        return f"c must be between 0 and N = {n}"
    return f"**{c}c{n - c}t** · rho = c/N = **{c / n:.2f}**"


def _silence_text(*values) -> str:  # type: ignore[no-untyped-def]
    """A warning naming the agents that can never write an RR chunk with these controls, or ""."""
    try:
        request = ArenaRequest(**dict(zip(ARENA_FIELDS, values, strict=True)))
        prepared = build_run(request)
    except (RRError, TypeError, ValueError):
        return ""  # an invalid control is reported when the user presses Run
    warning = silence_warning(prepared.config, [prepared.question.qid])
    return f"⚠ **Silent agents**: {warning}" if warning else ""


def build_arena_tab(pool: ModelSource) -> dict[str, gr.components.Component]:
    """Add the arena to the enclosing Blocks/Tab; returns its components by name."""
    default = ArenaRequest(model=DEFAULT_MODEL)
    c: dict[str, gr.components.Component] = {}
    gr.Markdown(
        "N agents answer one question; c of them are **corrupted** by a prompt injection that "
        "pushes a wrong target answer. **MAJ** votes over N independent answers; **RRMaj** lets "
        "the agents take turns writing K tokens of one shared text, M times, and votes over those."
    )
    with gr.Row():
        preset_buttons = [
            gr.Button(p.label, size="sm", variant="secondary", elem_id=f"rr-preset-{i}")
            for i, p in enumerate(PRESETS)
        ]
    with gr.Accordion("What the presets show", open=False):
        gr.Markdown("\n".join(f"* **{p.label}**: {p.description}" for p in PRESETS))
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=320):
            with gr.Group():
                c["ensemble"] = gr.Radio(
                    ["same", "per agent"],
                    value=default.ensemble,
                    label="Ensemble",
                    info="one model for all N agents, or model and role per agent",
                )
                c["model"] = gr.Dropdown(
                    list(REGISTRY),
                    value=default.model,
                    label="Model (all agents)",
                    allow_custom_value=True,
                    info="offline: smollm2, gemma3-270m; others need the hub",
                )
                with gr.Row():
                    c["n"] = gr.Slider(1, MAX_AGENTS_UI, value=default.n, step=1, label="N agents")
                    c["c"] = gr.Slider(
                        0, MAX_AGENTS_UI, value=default.c, step=1, label="c corrupted"
                    )
                rho = gr.Markdown(_rho_text("same", default.n, default.c, ""))
                c["agents"] = gr.Textbox(
                    value="smollm2, corrupted\nsmollm2, corrupted\nsmollm2, honest",
                    lines=3,
                    visible=default.ensemble == "per agent",
                    label="Per-agent ensemble (one line per agent: model, honest|corrupted)",
                )
            with gr.Group():
                c["strength"] = gr.Radio(
                    list(STRENGTHS), value=default.strength, label="Corruption strength"
                )
                c["custom_template"] = gr.Textbox(
                    value="",
                    label="Custom injection (must contain {target})",
                    placeholder=TEMPLATES["moderate"],
                    visible=default.strength == "custom",
                )
                c["target"] = gr.Textbox(
                    value="", label="Target answer (empty: a wrong answer picked by the seed)"
                )
        with gr.Column(scale=1, min_width=320):
            with gr.Group():
                with gr.Row():
                    c["k"] = gr.Slider(1, 256, value=default.k, step=1, label="K tokens per turn")
                    c["m"] = gr.Slider(
                        0, MAX_AGENTS_UI, value=default.m, step=1, label="M trajectories (0 = N)"
                    )
                with gr.Row():
                    c["max_tokens"] = gr.Slider(
                        8, 1024, value=default.max_tokens, step=8, label="L max new tokens"
                    )
                    c["order"] = gr.Radio(
                        list(ORDERS),
                        value=default.order,
                        label="Speaking order",
                        info="shuffled: a seeded order per trajectory; fixed: seat order",
                    )
                with gr.Row():
                    c["temperature"] = gr.Slider(
                        0, 1.5, value=default.temperature, step=0.05, label="Temperature"
                    )
                with gr.Row():
                    c["seed"] = gr.Number(value=default.seed, precision=0, label="Seed")
                    c["eos_policy"] = gr.Dropdown(
                        list(EOS_POLICIES),
                        value=default.eos_policy,
                        label="End of sequence: ends the trajectory (end) or the turn (pass)",
                    )
                with gr.Row():
                    c["adversary"] = gr.Dropdown(
                        list(ADVERSARIES),
                        value=default.adversary,
                        label="Adversary",
                        info="static: the injection (paper); contextual: argues against the "
                        "shared text; last-word: a corrupted agent writes the last turn",
                    )
                    c["prompt_style"] = gr.Dropdown(
                        list(PROMPT_STYLES),
                        value=default.prompt_style,
                        label="Prompt style",
                        info="direct: the task prompt (paper); step-by-step: asks for reasoning "
                        "steps before the answer",
                    )
                    c["turn_policy"] = gr.Dropdown(
                        list(TURN_POLICIES),
                        value=default.turn_policy,
                        label="Turn length",
                        info="fixed: K tokens; sentence: to a sentence end; uncertainty: until "
                        "the writer is unsure (both after K/4 tokens, at most K; docs/turns.md)",
                    )
                silence = gr.Markdown(_silence_text(*astuple(default)), elem_id="rr-silence")
            with gr.Group():
                with gr.Row():
                    c["task"] = gr.Dropdown(
                        [*SWEEP_TASK_CHOICES, (CUSTOM, CUSTOM)], value=default.task, label="Task"
                    )
                    c["question_index"] = gr.Number(
                        value=default.question_index, precision=0, label="Question #"
                    )
                    shuffle = gr.Button("Random", size="sm", min_width=60, scale=0)
                typed = default.task == CUSTOM
                c["custom_question"] = gr.Textbox(
                    lines=3, label="Your question (list options as (A) ...)", visible=typed
                )
                c["custom_gold"] = gr.Textbox(
                    label="Correct answer of your question (optional)", visible=typed
                )
                preview = gr.HTML(_preview(default.task, default.question_index, "", ""))
    with gr.Row():
        run_button = gr.Button("Run MAJ vs RRMaj", variant="primary", elem_id="rr-run")
        stop_button = gr.Button("Stop", variant="stop", elem_id="rr-stop")
    status = gr.Markdown("Press **Run** or pick a preset.", elem_id="rr-status")
    verdict = gr.HTML("", elem_id="rr-verdict")
    with gr.Row(equal_height=False):
        maj = gr.HTML(render.placeholder("MAJ"), elem_id="rr-maj")
        rr = gr.HTML(render.placeholder("RRMaj"), elem_id="rr-rrmaj")
    with gr.Accordion("Run record (JSON)", open=False):
        record = gr.JSON(label="summary of the run (no texts)")
    state = gr.State(None)

    controls = [c[name] for name in ARENA_FIELDS]
    outputs = [status, verdict, maj, rr, record, state]
    run = _run_callback(pool)
    run_event = run_button.click(
        run, controls, outputs, api_name="run", concurrency_id="model", concurrency_limit=1
    )
    cancellable = [run_event]
    for button, preset in zip(preset_buttons, PRESETS, strict=True):
        values = asdict(replace(preset.request, model=DEFAULT_MODEL))
        filled = button.click(
            lambda v=values: [v[name] for name in ARENA_FIELDS],
            None,
            controls,
            queue=False,
            api_visibility="private",
        )
        cancellable.append(
            filled.then(
                run,
                controls,
                outputs,
                concurrency_id="model",
                concurrency_limit=1,
                api_visibility="private",
            )
        )
    stop_button.click(None, None, None, cancels=cancellable, api_visibility="private")

    question_inputs = [c["task"], c["question_index"], c["custom_question"], c["custom_gold"]]
    for trigger in question_inputs:
        trigger.change(_preview, question_inputs, preview, queue=False, api_visibility="private")
    shuffle.click(
        _random_index, c["task"], c["question_index"], queue=False, api_visibility="private"
    )
    # Show only the controls the current choices use.
    c["ensemble"].change(
        lambda mode: (
            [gr.update(visible=(mode == "same"))] * 3 + [gr.update(visible=(mode == "per agent"))]
        ),
        c["ensemble"],
        [c["model"], c["n"], c["c"], c["agents"]],
        queue=False,
        api_visibility="private",
    )
    c["strength"].change(
        lambda strength: gr.update(visible=(strength == "custom")),
        c["strength"],
        c["custom_template"],
        queue=False,
        api_visibility="private",
    )
    c["task"].change(
        lambda task: [gr.update(visible=(task == CUSTOM))] * 2,
        c["task"],
        [c["custom_question"], c["custom_gold"]],
        queue=False,
        api_visibility="private",
    )
    # The silent-agent warning follows every control that changes who gets a turn.
    silence_inputs = ("ensemble", "model", "n", "c", "agents", "k", "m", "max_tokens", "order")
    silence_inputs += ("adversary",)  # "last-word" reseats a corrupted agent
    for name in (*silence_inputs, "seed", "task", "question_index", "custom_question"):
        c[name].change(_silence_text, controls, silence, queue=False, api_visibility="private")
    rho_inputs = [c["ensemble"], c["n"], c["c"], c["agents"]]
    for trigger in rho_inputs:
        trigger.change(_rho_text, rho_inputs, rho, queue=False, api_visibility="private")
    return {**c, "run": run_button, "stop": stop_button, "status": status, "maj": maj, "rrmaj": rr}
