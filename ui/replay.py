"""Recorded runs in the Arena: play a logged question back in the live panels, then run it live.

A replay is a recorded unit (rrdemo.replay) streamed through the same fold (`ArenaState`) and the
same panels (ui.render) as a live run; only the source of the events differs, and the panels say
"Recorded" with where it comes from, and the result line above them says what the recording's
whole run found. The page opens on the first setting of the gallery (rrdemo.gallery); the
chooser (ui.arena_chooser) and an uploaded run log play others. **Run live** fills the controls
with the recording's config (same seed) and runs it on the models.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import asdict, astuple, dataclass
from pathlib import Path
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
    check_replayable,
    find_question,
    finished_units,
    read_unit,
    replay,
)
from rrdemo.runs.log import RunLog, read_log
from ui import render
from ui.arena_chooser import (
    Chooser,
    build_chooser,
    build_shelf,
    result_for,
    result_for_log,
    wire_chooser,
)
from ui.arena_controls import expected_text
from ui.errors import user_error
from ui.owners import owned, session_of
from ui.queue_limits import REPLAY
from ui.render import Throttle
from ui.state import ARENA_FIELDS, ArenaRequest, ArenaState, arena_settings
from ui.streams import deadlined, paced

REPLAY_INTERVAL_S = (
    0.25  # a replay's frames: its chunks still grow smoothly, a slow browser keeps up
)
REPLAY_CONCURRENCY = 8  # a replay only reads a log and waits: several visitors may watch at once
MAX_UPLOAD_BYTES = 2 * 2**20  # what gradio takes (`app.MAX_UPLOAD`): a web sweep's log is ~100 kB


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


def _upload(path: str | None) -> tuple[Path, str]:
    if not path:
        raise RRError("upload a run log first (the .jsonl file `rrdemo experiment --out` writes)")
    file = Path(path)
    if file.stat().st_size > MAX_UPLOAD_BYTES:
        raise RRError(
            f"{file.name} is larger than {MAX_UPLOAD_BYTES >> 20} MiB; upload one run log"
        )
    return file, file.name


_NAME = "\0name\0"  # where a cached refusal names the file: each upload's own name goes there


def _as_uploaded(exc: RRError, file: Path) -> RRError:
    """The log reader's message about an upload, naming the file as the user named it (never its
    path on the server), and saying what to upload."""
    return RRError(
        f"{str(exc).replace(str(file), _NAME)}; upload the .jsonl run log that "
        "`rrdemo experiment --out` writes"
    )


MAX_LISTED = 2000  # finished questions an uploaded log may list (a real web sweep has at most 48)


@dataclass
class ReadLog:
    """An uploaded log as read once: the log, its choices, and (when first asked) the outcome of
    each of its conditions (`rrdemo.gallery.cell_outcomes`, a bootstrap over its questions)."""

    log: RunLog
    choices: tuple[tuple[str, str], ...]
    outcomes: dict | None = None


class UploadedLogs:
    """Uploaded run logs by their content's hash: the last `size` read, and the last `refusals`
    refused (a refused log is refused again from memory, not read again). Bounded both ways; one
    per app (`wire_replay`)."""

    def __init__(self, size: int = 4, refusals: int = 64) -> None:
        self.size, self.most_refused = size, refusals
        self.read_logs: OrderedDict[str, ReadLog] = OrderedDict()
        self.refused: OrderedDict[str, str] = OrderedDict()
        self.reads = 0  # logs parsed (the cost this cache saves: a test counts it)
        self.lock = threading.Lock()

    def read(self, path: str | None) -> tuple[ReadLog, str]:
        """The log uploaded at `path` and its name as the user named it; RRError (one sentence,
        naming the file, never its path) when it cannot be replayed here."""
        file, name = _upload(path)
        digest = hashlib.sha256(file.read_bytes()).hexdigest()
        with self.lock:
            if digest in self.refused:
                self.refused.move_to_end(digest)
                raise RRError(self.refused[digest].replace(_NAME, name))
            if digest in self.read_logs:
                self.read_logs.move_to_end(digest)
                return self.read_logs[digest], name
        try:
            self.reads += 1
            read = _read_upload(file)
        except RRError as exc:  # the reader names the file by its path: the marker replaces it
            message = str(_as_uploaded(exc, file) if str(file) in str(exc) else exc)
            self._keep(self.refused, digest, message, self.most_refused)
            raise RRError(message.replace(_NAME, name)) from None
        self._keep(self.read_logs, digest, read, self.size)
        return read, name

    def _keep(self, cache: OrderedDict, digest: str, value, most: int) -> None:
        with self.lock:
            cache[digest] = value
            while len(cache) > most:
                cache.popitem(last=False)

    def choices(self, path: str | None) -> list[tuple[str, str]]:
        """The finished questions of an uploaded log: "<label> <task> · <question>: <verdict>"."""
        return list(self.read(path)[0].choices)

    def unit(self, path: str | None, choice: str) -> tuple[ReadLog, RecordedUnit]:
        """The uploaded log, as read once, and the question picked from it."""
        read, name = self.read(path)
        if not isinstance(choice, str):
            raise RRError("pick a question of your log from the list")
        key, _, qid = choice.partition("|")
        return read, read_unit(read.log, qid, key, source=name)

    def result(self, read: ReadLog, unit: RecordedUnit) -> str:
        """The result line of a question of the log, from that log's own run (its outcomes
        computed once per log)."""
        from rrdemo.gallery import cell_outcomes

        if read.outcomes is None:
            read.outcomes = cell_outcomes(read.log)
        return result_for_log(read.log, unit, read.outcomes)


def _read_upload(file: Path) -> ReadLog:
    """Parse an uploaded log and list its finished questions, refusing (RRError, the file named by
    its path) one a replay here cannot bound: too many records, a chunk too long, or more than
    `MAX_LISTED` finished questions."""
    log = read_log(file)
    check_replayable(log, _NAME)
    units = finished_units(log)
    if len(units) > MAX_LISTED:
        raise RRError(
            f"{_NAME} has {len(units):,} finished questions; this page lists at most "
            f"{MAX_LISTED:,}: replay it with `python -m rrdemo replay`"
        )
    choices = []
    for key, qid in units:
        unit = read_unit(log, qid, key, source=_NAME, with_text=False)
        choices.append((f"{unit.setting} · {qid}: {unit.verdict()}", f"{key}|{qid}"))
    if not choices:
        raise RRError(f"{_NAME} is a run log but has no finished question yet")
    return ReadLog(log, tuple(choices))


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
    played = {"concurrency_id": REPLAY, "concurrency_limit": REPLAY_CONCURRENCY}
    quick = {"queue": False, "api_visibility": "private"}

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

    def upload_values(path: str | None, choice: str) -> list:
        read, unit = logs.unit(path, choice)
        return values(unit, logs.result(read, unit))

    fill_upload = _plain(upload_values)
    play_upload = _streamed(lambda path, choice: stream_replay(logs.unit(path, choice)[1], seconds))

    def then_play(picked, source=parts.choice, to_choice=None, api_name: str | None = None):
        """After a pick: the controls follow, then the recording plays. `to_choice` turns the
        value of `source` into the recording's choice (a setting plays its first question):
        the question dropdown's new value is not read back, so no pick races another."""
        choose = to_choice or (lambda value: value)
        fill_pick = _plain(lambda value: gallery_values(choose(value)))
        play_pick = _streamed(
            lambda value: stream_replay(gallery_unit(gallery, choose(value)), seconds)
        )
        filled = picked.then(fill_pick, source, fill, **quick)
        named = {"api_name": api_name} if api_name else {"api_visibility": "private"}
        return filled.then(play_pick, source, outputs, **named, **played)

    picked = parts.choice.input(lambda c: c, parts.choice, parts.choice, **quick)
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
        opening = gr.on(None, play_first, None, outputs, api_visibility="private", **played)
        events.append(opening)
    listed = parts.upload.upload(
        _plain(lambda path: gr.update(choices=logs.choices(path), value=None)),
        parts.upload,
        parts.uploaded,
        api_name="upload_log",
        **played,  # a replay's limits: at most 2 waiting or running per client
    )
    # the pick reads the log as listed (`logs`), and counts as a replay: 2 per client
    pick = {"api_visibility": "private", **played}
    chosen = parts.uploaded.input(fill_upload, [parts.upload, parts.uploaded], fill, **pick)
    uploaded = [parts.upload, parts.uploaded]
    events += [
        listed,
        chosen.then(play_upload, uploaded, outputs, api_visibility="private", **played),
    ]

    def live_values(live: dict | None) -> list:
        if not live:
            raise RRError("this recording cannot run live here; pick another, then Run live")
        return [live[name] for name in ARENA_FIELDS]

    filled = parts.run_live.click(_plain(live_values), parts.live, controls, **quick)
    once = {"concurrency_id": "model", "concurrency_limit": 1}
    live_run = filled.success(run, controls, outputs, api_visibility="private", **once)
    return [*events, live_run], live_run
