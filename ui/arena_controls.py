"""The Arena's controls: one small builder per group, and the helpers that follow them.

`build_controls(default)` lays the groups out (ensemble, corruption, protocol, settings beyond the
paper, question) and returns every control by its `ArenaRequest` field name, with the live helper
texts beside them (rho, the silent-agent warning, the question preview). `wire_controls` makes the
helpers follow the controls and shows only the controls the current choices use.
"""

from __future__ import annotations

import random
from dataclasses import astuple, dataclass, fields
from html import escape

import gradio as gr

from rrdemo.backends.choice import DEFAULT_BACKEND
from rrdemo.backends.registry import REGISTRY
from rrdemo.config import ORDERS, STRENGTHS, ct_label, rho_of
from rrdemo.corruption import TEMPLATES
from rrdemo.defaults import INTERACTIVE_DEFAULTS, MODEL_DEFAULTS, ModelDefaults
from rrdemo.errors import RRError
from rrdemo.pace import question_time
from rrdemo.seats import parse_agents
from rrdemo.settings import Setting
from rrdemo.speakers import silence_warning
from rrdemo.tasks import get_task, load_questions
from ui import render
from ui.choices import SWEEP_TASK_CHOICES
from ui.state import (
    ARENA_FIELDS,
    CUSTOM,
    ArenaRequest,
    arena_settings,
    build_run,
    pick_question,
)

MAX_AGENTS_UI = 9

Components = dict[str, gr.components.Component]


# -- the helper texts -----------------------------------------------------------------------------
def question_preview(task_name: str, index: float, text: str, gold: str) -> str:
    """The picked question with its gold answer, or why it cannot be picked."""
    try:
        task, question = pick_question(task_name, int(index or 0), text, gold)
    except RRError as exc:
        return f'<div style="color:#b91c1c">{escape(str(exc))}</div>'
    return render.render_question(task.title, question.text, question.gold, question.qid)


def _random_index(task_name: str) -> int:
    if task_name == CUSTOM:
        return 0
    return random.randrange(len(load_questions(get_task(task_name))))


def _rho_text(ensemble: str, n: float, c: float, agents: str) -> str:
    if ensemble == "per agent":
        try:
            specs = parse_agents(agents)
        except RRError as error:
            return str(error)
        n, c = len(specs), sum(a.corrupted for a in specs)
    n, c = int(n or 0), int(c or 0)
    if n < 1 or not 0 <= c <= n:
        return f"c must be between 0 and N = {n}"
    return f"**{ct_label(c, n - c)}** · rho = c/N = **{rho_of(c, n):.2f}**"


def _silence_text(*values) -> str:
    """A warning naming the agents that can never write an RR chunk with these controls, or ""."""
    try:
        request = ArenaRequest(**dict(zip(ARENA_FIELDS, values, strict=True)))
        prepared = build_run(request)
    except (RRError, TypeError, ValueError):
        return ""  # an invalid control is reported when the user presses Run
    warning = silence_warning(prepared.config, [prepared.question.qid])
    timed = question_time(prepared.config, prepared.task.name).line()  # beside the Run button
    return "\n\n".join(
        t for t in (f"⚠ **Silent agents**: {warning}" if warning else "", timed) if t
    )


def expected_text(request: dict | None, backend: str = DEFAULT_BACKEND) -> str:
    """The line beside Run live: the expected time of the run `request` (an `ArenaRequest` as a
    dict) on `backend`, and how it was reached (`rrdemo.pace`); "" when it cannot run here."""
    try:
        prepared = build_run(ArenaRequest(**request)) if request else None
    except (RRError, TypeError, ValueError):
        prepared = None
    if prepared is None:
        return ""
    return question_time(prepared.config, prepared.task.name, backend=backend).line()


# -- the groups -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Controls:
    """Every control by its `ArenaRequest` field, and the helpers shown beside them."""

    fields: Components
    rho: gr.Markdown
    silence: gr.Markdown
    preview: gr.HTML
    shuffle: gr.Button

    @property
    def inputs(self) -> list[gr.components.Component]:
        """The controls in the order `ArenaRequest` takes them."""
        return [self.fields[name] for name in ARENA_FIELDS]


def _ensemble(default: ArenaRequest, c: Components, models: list[str]) -> gr.Markdown:
    c["ensemble"] = gr.Radio(
        ["same", "per agent"],
        value=default.ensemble,
        label="Ensemble",
        info="one model for all N agents, or model and role per agent",
    )
    c["model"] = gr.Dropdown(
        models,
        value=default.model,
        label="Model (all agents)",
        elem_id="rr-model",
        allow_custom_value=True,
        info="offline: smollm2, gemma3-270m, qwen2.5-coder-0.5b/1.5b (these reason step by "
        "step: picking one sets its prompt style, K and L); others need the hub",
    )
    with gr.Row():
        c["n"] = gr.Slider(1, MAX_AGENTS_UI, value=default.n, step=1, label="N agents")
        c["c"] = gr.Slider(0, MAX_AGENTS_UI, value=default.c, step=1, label="c corrupted")
    rho = gr.Markdown(_rho_text(default.ensemble, default.n, default.c, default.agents))
    c["agents"] = gr.Textbox(
        value="smollm2, corrupted\nsmollm2, corrupted\nsmollm2, honest",
        lines=3,
        visible=default.ensemble == "per agent",
        label="Per-agent ensemble (one line per agent: model, honest|corrupted)",
    )
    return rho


def _corruption(default: ArenaRequest, c: Components) -> None:
    c["strength"] = gr.Radio(list(STRENGTHS), value=default.strength, label="Corruption strength")
    c["custom_template"] = gr.Textbox(
        value="",
        label="Custom injection (must contain {target})",
        placeholder=TEMPLATES["moderate"],
        visible=default.strength == "custom",
    )
    c["target"] = gr.Textbox(
        value="", label="Target answer (empty: a wrong answer picked by the seed)"
    )


def _protocol(default: ArenaRequest, c: Components) -> None:
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
    c["seed"] = gr.Number(value=default.seed, precision=0, label="Seed")


def _control(s: Setting, value: object) -> gr.components.Component:
    """The control of one setting beyond the paper, from its declaration: a dropdown of its
    words, a checkbox, or a number field."""
    label = s.label or s.what[:1].upper() + s.what[1:]
    elem_id = "rr-" + s.name.replace("_", "-")
    if s.choices:
        return gr.Dropdown(list(s.choices), value=value, label=label, info=s.help, elem_id=elem_id)
    if s.type is bool:
        return gr.Checkbox(value=value, label=label, info=s.help, elem_id=elem_id)
    precision = 0 if s.type is int else None
    return gr.Number(value=value, precision=precision, label=label, info=s.help, elem_id=elem_id)


def _beyond_the_paper(default: ArenaRequest, c: Components) -> None:
    """A control per setting beyond the paper (docs/adversary.md, docs/turns.md,
    docs/theory.md); the declarations give their words, labels and help."""
    shown = arena_settings()
    with gr.Row():
        for s in shown:
            if s.type is not bool:
                c[s.name] = _control(s, getattr(default, s.name))
    for s in shown:
        if s.type is bool:
            c[s.name] = _control(s, getattr(default, s.name))


def _question(default: ArenaRequest, c: Components) -> tuple[gr.Button, gr.HTML]:
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
    c["custom_gold"] = gr.Textbox(label="Correct answer of your question (optional)", visible=typed)
    shown = gr.HTML(question_preview(default.task, default.question_index, "", ""))
    return shuffle, shown


def build_controls(default: ArenaRequest, models: list[str] | None = None) -> Controls:
    """Two columns of grouped controls, set to `default`; the model list offers `models`
    (default: every registry model)."""
    c: Components = {}
    with gr.Row(equal_height=False):
        with gr.Column(scale=1, min_width=320):
            with gr.Group():
                rho = _ensemble(default, c, list(REGISTRY) if models is None else models)
            with gr.Group():
                _corruption(default, c)
        with gr.Column(scale=1, min_width=320):
            with gr.Group():
                _protocol(default, c)
                _beyond_the_paper(default, c)
                silence = gr.Markdown(_silence_text(*astuple(default)), elem_id="rr-silence")
            with gr.Group():
                shuffle, shown = _question(default, c)
    return Controls(c, rho, silence, shown, shuffle)


# -- what follows what ------------------------------------------------------------------------------
def _on_change(triggers, fn, inputs, outputs) -> None:
    for trigger in triggers:
        trigger.change(fn, inputs, outputs, queue=False, api_visibility="private")


def _show_what_is_used(c: Components) -> None:
    """Show only the controls the current choices use."""
    _on_change(
        [c["ensemble"]],
        lambda mode: (
            [gr.update(visible=(mode == "same"))] * 3 + [gr.update(visible=(mode == "per agent"))]
        ),
        c["ensemble"],
        [c["model"], c["n"], c["c"], c["agents"]],
    )
    _on_change(
        [c["strength"]],
        lambda strength: gr.update(visible=(strength == "custom")),
        c["strength"],
        c["custom_template"],
    )
    _on_change(
        [c["task"]],
        lambda task: [gr.update(visible=(task == CUSTOM))] * 2,
        c["task"],
        [c["custom_question"], c["custom_gold"]],
    )


# The controls a model's own defaults set (`rrdemo.config.ModelDefaults`): K, L, then the
# settings beyond the paper it sets (the prompt style).
MODEL_SETTINGS: tuple[str, ...] = (
    "k",
    "max_tokens",
    *(f.name for f in fields(ModelDefaults) if f.name not in ("k", "max_tokens")),
)


def model_settings(model: str, task: str) -> tuple:
    """The `MODEL_SETTINGS` the front ends start from for `model` on `task`
    (`rrdemo.defaults.MODEL_DEFAULTS`: the Qwen models reason step by step)."""
    d = INTERACTIVE_DEFAULTS.for_models([model or ""], task)
    return tuple(getattr(d, name) for name in MODEL_SETTINGS)


def _task_length(model: str, task: str, current: int) -> int:
    """L for `task` when the model has its own per-task L; else the user's L stays."""
    if (model or "").strip().lower() not in MODEL_DEFAULTS:
        return current
    return INTERACTIVE_DEFAULTS.for_models([model or ""], task).max_tokens


def wire_controls(controls: Controls) -> None:
    """The helpers follow the controls; hidden controls appear when a choice needs them."""
    c = controls.fields
    # A model's own defaults: picking it sets K, L and the prompt style; a task sets its L.
    # `.input`, not `.change`: a preset or a recording that fills the controls keeps its values.
    c["model"].input(
        model_settings,
        [c["model"], c["task"]],
        [c[name] for name in MODEL_SETTINGS],
        queue=False,
        api_visibility="private",
    )
    c["task"].input(
        _task_length,
        [c["model"], c["task"], c["max_tokens"]],
        c["max_tokens"],
        queue=False,
        api_visibility="private",
    )
    question = [c["task"], c["question_index"], c["custom_question"], c["custom_gold"]]
    _on_change(question, question_preview, question, controls.preview)
    controls.shuffle.click(
        _random_index, c["task"], c["question_index"], queue=False, api_visibility="private"
    )
    _show_what_is_used(c)
    # The silent-agent warning follows every control that changes who gets a turn
    # ("last-word" reseats a corrupted agent).
    silence = ("ensemble", "model", "n", "c", "agents", "k", "m", "max_tokens", "order")
    silence += ("adversary", "seed", "task", "question_index", "custom_question")
    _on_change([c[name] for name in silence], _silence_text, controls.inputs, controls.silence)
    ensemble = [c["ensemble"], c["n"], c["c"], c["agents"]]
    _on_change(ensemble, _rho_text, ensemble, controls.rho)
