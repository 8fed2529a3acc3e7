"""Recorded runs in the Arena: play a logged question back in the live panels, then run it live.

A replay is a recorded unit (rrdemo.replay) streamed through the same fold (`ArenaState`) and the
same panels (ui.render) as a live run; only the source of the events differs, and the panels say
"Recorded" with where it comes from, and the result line above them says what the recording's
whole run found. The page opens on the first setting of the gallery (rrdemo.gallery); the
chooser (ui.arena_chooser) and an uploaded run log play others. **Run live** fills the controls
with the recording's config (same seed) and runs it on the models.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import asdict, astuple, dataclass
from typing import Any

import gradio as gr

from rrdemo.backends.choice import DEFAULT_BACKEND
from rrdemo.errors import RRError
from rrdemo.events import METHODS
from rrdemo.fold import Fold
from rrdemo.gallery import Gallery
from rrdemo.replay import (
    REPLAY_SECONDS,
    RecordedUnit,
    find_question,
    replay,
)
from ui import render
from ui.arena_chooser import (
    Chooser,
    build_chooser,
    build_shelf,
    result_for,
    wire_chooser,
)
from ui.arena_controls import expected_text
from ui.errors import user_error
from ui.owners import owned, session_of
from ui.queue_limits import REPLAY
from ui.render import Throttle
from ui.state import ARENA_FIELDS, ArenaRequest, ArenaState, arena_settings
from ui.streams import deadlined, paced
from ui.uploaded_logs import UploadedLogs

REPLAY_INTERVAL_S = (
    0.25  # a replay's frames: its chunks still grow smoothly, a slow browser keeps up
)
REPLAY_CONCURRENCY = 8  # a replay only reads a log and waits: several visitors may watch at once


# -- a recording as Arena values ------------------------------------------------------------------
def arena_request(unit: RecordedUnit) -> ArenaRequest:
    """The Arena's controls set to the recording's config and question (same seed, same target)."""
    cfg = unit.config
    task = unit.condition["task"]
    found = find_question(task, unit.question_id)
    if found is None:
        raise RRError(
            f"question {unit.question_id} of {task} is not in the data available here, so this "
            "recording can be replayed but not run live"
        )
    seated = all(a.corrupted == (i < cfg.c) for i, a in enumerate(cfg.agents))
    same = len({a.model for a in cfg.agents}) == 1 and seated
    lines = [f"{a.model}, {'corrupted' if a.corrupted else 'honest'}" for a in cfg.agents]
    return ArenaRequest(
        ensemble="same" if same else "per agent",
        model=cfg.agents[0].model,
        n=cfg.n,
        c=cfg.c,
        agents="\n".join(lines),
        strength=cfg.strength,
        custom_template=cfg.custom_template or "",
        target=(unit.done.get("target") or "") if cfg.c else "",
        k=cfg.k,
        m=cfg.m or 0,
        max_tokens=cfg.max_tokens,
        order=cfg.order,
        temperature=cfg.sampling.temperature,
        seed=cfg.sampling.seed,
        task=task,
        question_index=found[0],
        **{s.name: getattr(cfg, s.name) for s in arena_settings()},
    )


def replay_state(unit: RecordedUnit) -> ArenaState:
    """An empty Arena view of the recording, marked with its provenance."""
    done = unit.done
    return ArenaState(
        agents=[asdict(a) for a in unit.config.agents],
        question={
            "task": unit.condition["task"],
            "qid": unit.question_id,
            "text": unit.question_text,
            "gold": done.get("gold"),
            "target": done.get("target"),
        },
        config=unit.condition["config"],
        shown=Fold(methods=METHODS),
        status="starting",
        recorded=unit.provenance(),
    )


def stream_replay(
    unit: RecordedUnit, seconds: float = REPLAY_SECONDS, interval: float = REPLAY_INTERVAL_S
) -> Iterator[tuple]:
    """The recording's frames, as `ui.arena.stream_run` yields a live run's, paced to `seconds`."""
    state = replay_state(unit)
    where = f"**Recorded** · {unit.provenance()} · {render.setting_text(unit.config)}"
    yield render.frame(state, f"{where} · playing back…")
    throttle = Throttle(interval)
    for event in replay(unit, seconds):
        # Stop was pressed (the frames end here, saying so), or a newer stream took the panels
        if state.halted:
            break
        state.apply(event)
        if throttle.due(force=event.kind in ("decision", "compute_used")):
            yield render.frame(state, f"{where} · playing back…")
    yield render.frame(state, f"{where} · done. Press **Run live** to run this config now.")


# -- where recordings come from: the gallery, or a log the user uploaded ----------------------------
def gallery_unit(gallery: Gallery, choice: str) -> RecordedUnit:
    if not isinstance(choice, str):
        raise RRError("pick a recorded run from the list")
    index, _, qid = choice.partition("/")
    if not index.isdigit() or int(index) >= len(gallery.settings):
        raise RRError("pick a recorded run from the list")
    return gallery.settings[int(index)].unit(qid)


# -- the components and what they do ----------------------------------------------------------------
@dataclass(frozen=True)
class ReplayControls:
    """The chooser, Run live, Stop, and the upload of one's own log."""

    chooser: Chooser
    run_live: gr.Button
    stop: gr.Button
    upload: gr.File
    uploaded: gr.Dropdown
    live: gr.State  # the ArenaRequest values of the recording shown last (what Run live runs)
    live_time: gr.Markdown  # beside Run live: how long running it live is expected to take

    @property
    def choice(self) -> gr.Dropdown:
        """The question dropdown: its value ("<setting>/<question>") is what plays."""
        return self.chooser.question


def _opening(gallery: Gallery | None) -> RecordedUnit | None:
    """The recording the page opens on: the first of the gallery."""
    entries = gallery.entries() if gallery is not None else []
    return gallery_unit(gallery, "{}/{}".format(*entries[0])) if entries else None


def opening_request(gallery: Gallery | None) -> ArenaRequest | None:
    """The controls of the run the page opens on (None when it cannot run live here)."""
    unit = _opening(gallery)
    try:
        return arena_request(unit) if unit is not None else None
    except RRError:
        return None


def opening_frame(gallery: Gallery | None) -> tuple | None:
    """The first frame of the opening recording: its labelled, still empty panels."""
    unit = _opening(gallery)
    return next(stream_replay(unit)) if unit is not None else None


def opening_result(gallery: Gallery | None) -> str:
    """The result line of the recording the page opens on ("" without a gallery)."""
    entries = gallery.entries() if gallery is not None else []
    if not entries:
        return ""
    index, qid = entries[0]
    return result_for(gallery, gallery.settings[index].unit(qid), index)


def opening_question(gallery: Gallery | None) -> str:
    """The question the page opens on, as the panels above it show it ("" without a gallery)."""
    unit = _opening(gallery)
    return question_html(unit) if unit is not None else ""


def question_html(unit: RecordedUnit) -> str:
    from rrdemo.tasks import get_task

    task = unit.condition["task"]
    try:
        title = get_task(task).title
    except RRError:
        title = task
    text = unit.question_text or "(the question's text is not in the data available here)"
    return render.render_question(title, text, unit.done.get("gold"), unit.question_id)


def build_replay(
    gallery: Gallery, opening: ArenaRequest | None, backend: str = DEFAULT_BACKEND
) -> ReplayControls:
    """The chooser row (model · task, setting, question, Run live, Stop) with Run live's expected
    time under it (on `backend`), the recordings kept aside and the upload; `opening` is what
    Run live runs before any pick."""
    with gr.Row(equal_height=False, elem_id="rr-chooser"):
        chooser = build_chooser(gallery)
        with gr.Column(scale=0, min_width=120):
            run_live = gr.Button("Run live", variant="primary", elem_id="rr-run-live")
            stop = gr.Button("Stop", variant="stop", elem_id="rr-stop", size="sm")
    opened = asdict(opening) if opening is not None else None
    live_time = gr.Markdown(expected_text(opened, backend), elem_id="rr-live-time")
    build_shelf(chooser)
    with gr.Accordion("Replay your own run log", open=False):
        upload = gr.File(
            label="A run log (.jsonl) written by `rrdemo experiment --out`",
            file_types=[".jsonl"],
            type="filepath",
            elem_id="rr-upload",
        )
        uploaded = gr.Dropdown([], label="Question of your log", elem_id="rr-uploaded")
    live = gr.State(opened)
    return ReplayControls(chooser, run_live, stop, upload, uploaded, live, live_time)


OPENING_PACE = 0.5  # the page's first recording plays in half the usual time


def _plain(fn: Callable) -> Callable:
    """`fn` with any error shown to the user as one plain message (`ui.errors.user_error`)."""

    def call(*args):
        try:
            return fn(*args)
        except Exception as exc:  # plain text, escaped once, never a server path or traceback
            raise user_error(exc, "replay") from None

    return call


REPLAY_WALL_S = 120.0  # a replay plays in about 12 s; a slow reader gets ten times that
REPLAY_CPU_S = 20.0  # CPU seconds a replay's own steps may take (one plays in about 1 s of CPU)


def _streamed(fn: Callable[..., Iterator]) -> Callable[..., Iterator]:
    """The same for a callback that streams: a replay, stopped at its wall-time and CPU-time
    deadlines (`ui.streams.deadlined`), each frame made once the one before was sent (`paced`).
    Gradio passes the event's `gr.Request` first (by its type hint), then the inputs."""

    def call(request: gr.Request | None, *args):
        try:  # the recording takes the visitor's panels from the stream that held them
            frames = owned(fn(*args), session_of(request))
            limited = deadlined(frames, REPLAY_WALL_S, REPLAY_CPU_S, "replay")
            yield from paced(limited, REPLAY, request)
        except Exception as exc:  # plain text, escaped once, never a server path or traceback
            raise user_error(exc, "replay") from None

    return call


_PLAYED = {"concurrency_id": REPLAY, "concurrency_limit": REPLAY_CONCURRENCY}  # a replay's queue
_QUICK = {"queue": False, "api_visibility": "private"}  # a control set, no queue


def wire_replay(
    gallery: Gallery,
    parts: ReplayControls,
    controls: list,
    shown: list,
    outputs: list,
    run: Callable,
    seconds: float = REPLAY_SECONDS,
    backend: str = DEFAULT_BACKEND,
) -> tuple[list, Any]:
    """Page load, the chooser, the upload and Run live; returns the events Stop cancels and
    Run live's run. `shown` is the question and the result line above the panels.

    Each way of picking a recording first sets the controls to its config (so the panel shows
    what is playing and Run live can run it), then plays it; the page's opening recording has its
    controls set when the page is built, so it starts playing at once.
    """
    fill = [*controls, parts.live, parts.live_time, *shown]
    logs = UploadedLogs()  # this app's uploaded logs, read once each

    def values(unit: RecordedUnit, result: str) -> list:
        """The controls set to the recording (left as they are when it cannot run live here),
        then the question and the result line above the panels."""
        try:
            request = arena_request(unit)
            filled = [*astuple(request), asdict(request), expected_text(asdict(request), backend)]
        except RRError:
            filled = [gr.update() for _ in controls] + [None, ""]
        return [*filled, question_html(unit), result]

    def gallery_values(choice: str) -> list:
        unit = gallery_unit(gallery, choice)
        return values(unit, result_for(gallery, unit, int(choice.partition("/")[0])))

    def then_play(picked, source=parts.choice, to_choice=None, api_name: str | None = None):
        """After a pick: the controls follow, then the recording plays. `to_choice` turns the
        value of `source` into the recording's choice (a setting plays its first question):
        the question dropdown's new value is not read back, so no pick races another."""
        choose = to_choice or (lambda value: value)
        fill_pick = _plain(lambda value: gallery_values(choose(value)))
        play_pick = _streamed(
            lambda value: stream_replay(gallery_unit(gallery, choose(value)), seconds)
        )
        filled = picked.then(fill_pick, source, fill, **_QUICK)
        named = {"api_name": api_name} if api_name else {"api_visibility": "private"}
        return filled.then(play_pick, source, outputs, **named, **_PLAYED)

    picked = parts.choice.input(lambda c: c, parts.choice, parts.choice, **_QUICK)
    events = [then_play(picked, api_name="replay")]
    events += [
        then_play(event, source, to_choice)
        for event, source, to_choice in wire_chooser(gallery, parts.chooser)
    ]
    entries = gallery.entries()
    if entries:  # the page opens on the first recorded run (its controls are set already)
        first = "{}/{}".format(*entries[0])
        # the opening recording plays at twice the pace, so its verdict lands within seconds
        play_first = _streamed(
            lambda: stream_replay(gallery_unit(gallery, first), seconds * OPENING_PACE)
        )
        opening = gr.on(None, play_first, None, outputs, api_visibility="private", **_PLAYED)
        events.append(opening)
    events += _wire_uploads(parts, logs, values, fill, outputs, seconds)
    live_run = _wire_run_live(parts, controls, outputs, run)
    return [*events, live_run], live_run


def _wire_uploads(
    parts: ReplayControls,
    logs: UploadedLogs,
    values: Callable,
    fill: list,
    outputs: list,
    seconds: float,
) -> list:
    """An uploaded log listed, then a recording picked from it: the controls follow (`values`),
    then it plays. Both count as replays, with a replay's limits (at most 2 waiting or running per
    client); the pick reads the log as listed (`logs`)."""

    def upload_values(path: str | None, choice: str) -> list:
        read, unit = logs.unit(path, choice)
        return values(unit, logs.result(read, unit))

    play_upload = _streamed(lambda path, choice: stream_replay(logs.unit(path, choice)[1], seconds))
    listed = parts.upload.upload(
        _plain(lambda path: gr.update(choices=logs.choices(path), value=None)),
        parts.upload,
        parts.uploaded,
        api_name="upload_log",
        **_PLAYED,
    )
    uploaded = [parts.upload, parts.uploaded]
    pick = {"api_visibility": "private", **_PLAYED}
    chosen = parts.uploaded.input(_plain(upload_values), uploaded, fill, **pick)
    return [
        listed,
        chosen.then(play_upload, uploaded, outputs, api_visibility="private", **_PLAYED),
    ]


def _wire_run_live(parts: ReplayControls, controls: list, outputs: list, run: Callable) -> Any:
    """Run live: the controls take the recording's live values, then `run` runs them, one model
    run at a time."""

    def live_values(live: dict | None) -> list:
        if not live:
            raise RRError("this recording cannot run live here; pick another, then Run live")
        return [live[name] for name in ARENA_FIELDS]

    filled = parts.run_live.click(_plain(live_values), parts.live, controls, **_QUICK)
    once = {"concurrency_id": "model", "concurrency_limit": 1}
    return filled.success(run, controls, outputs, api_visibility="private", **once)
