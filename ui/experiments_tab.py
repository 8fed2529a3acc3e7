"""The Experiments tab: a small sweep run in the background, with progress, a table and a plot.

The sweep goes through the experiment runner (`rrdemo.runs`: `plan_sweep`, then `run_plan`), which
logs every trajectory to a JSONL file under the data dir. A worker thread runs it; the callback
re-reads the log (`rrdemo.runs.log.read_log`) as units finish and shows accuracy against rho for
MAJ and RRMaj (`rrdemo.report.figures`), and MAJ vs RRMaj per adversary strategy when the sweep has
several (`rrdemo.report.adversary`). Stop ends the sweep after the question being run (the log
stays valid and can be resumed by the CLI).
"""

from __future__ import annotations

import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd
import plotly.graph_objects as go

from leaderboard.hub_sync import Store
from rrdemo.agents import ModelSource
from rrdemo.backends.registry import DEFAULT_MODEL, REGISTRY
from rrdemo.config import ADVERSARIES, BEYOND_PAPER, rho_of
from rrdemo.errors import RRError, Stopped
from rrdemo.events import METHODS
from rrdemo.limits import limits
from rrdemo.memory import check_memory
from rrdemo.pace import SweepPace
from rrdemo.paths import data_dir
from rrdemo.report.adversary import adversary_table_md, main_table_by_adversary
from rrdemo.report.figures import PALETTE, RhoLine, accuracy_rho_figure
from rrdemo.report.paper.beside import INTRO, cell_text
from rrdemo.report.paper.settings import SettingResult, settings_beside
from rrdemo.report.tables import VoteRates, vote_rates
from rrdemo.runs.log import read_log, read_run
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import Plan, plan_sweep
from ui.calibration_view import build_calibration_view
from ui.choices import SWEEP_TASK_CHOICES
from ui.errors import plain, user_error
from ui.layout import header_widths, legend_below
from ui.queue_limits import client_of, for_this_client
from ui.scratch import publish_file
from ui.streams import limited_run
from ui.sweep_submit import build_submit_row

STATIC = str(BEYOND_PAPER["adversary"])  # the paper's adversary, the default strategy
COLUMNS = [
    "task",
    "ensemble",
    "setting",
    "rho",
    "strength",
    "adversary",
    "K",
    "questions",
    "MAJ acc",
    "RRMaj acc",
    "Δ (RRMaj − MAJ)",
    "MAJ fooled",
    "RRMaj fooled",
]


def _result_row(r: VoteRates) -> list:
    """One table row: a condition's accuracy and fooled rate per method, and their difference."""
    c = r.condition
    return [
        c.get("task", "?"),
        c.get("ensemble", "?"),
        c.get("label", "?"),
        round(rho_of(c["c"], c["n"]), 3) if c.get("n") else None,
        c.get("strength", "?"),
        c["adversary"],
        c.get("k"),
        r.questions,
        round(r.accuracy["MAJ"], 3),
        round(r.accuracy["RRMaj"], 3),
        round(r.accuracy["RRMaj"] - r.accuracy["MAJ"], 3),
        round(r.fooled["MAJ"], 3),
        round(r.fooled["RRMaj"], 3),
    ]


# The table as shown: accuracies, fooled rates and their difference in % (as everywhere else
# in the app), rho as the ratio it is.
PERCENT = {
    "MAJ acc": "MAJ %",
    "RRMaj acc": "RRMaj %",
    "Δ (RRMaj − MAJ)": "Δ (RRMaj − MAJ), points",
    "MAJ fooled": "MAJ fooled %",
    "RRMaj fooled": "RRMaj fooled %",
}
SHOWN_COLUMNS = [PERCENT.get(c, c) for c in COLUMNS]


def shown_table(frame: pd.DataFrame) -> pd.DataFrame:
    """`results_frame` as the tab shows it: rates in % with one decimal."""
    shown = frame.copy()
    for column in PERCENT:
        shown[column] = [round(100 * float(v), 1) for v in shown[column]]
    return shown.rename(columns=PERCENT)


def results_frame(path: Path) -> pd.DataFrame:
    """Accuracy and fooled rate per condition from a sweep log (finished questions only); empty
    while the runner has not yet written the log's header."""
    try:
        log = read_log(path)
    except RRError:  # the worker has not started the log yet
        log = None
    rows = [_result_row(r) for r in vote_rates(log)] if log is not None else []
    frame = pd.DataFrame(rows, columns=COLUMNS)
    order = ["task", "strength", "adversary", "K", "rho"]
    return frame.sort_values(order).reset_index(drop=True)


ADVERSARY_WAITING = "MAJ vs RRMaj per adversary strategy appears as questions finish."


def adversary_results(path: Path) -> str:
    """MAJ vs RRMaj per adversary strategy and corrupted setting, with 95% intervals, as the
    report prints it (`rrdemo.report.adversary`); a waiting note until a question has finished."""
    try:
        run = read_run(path)
    except RRError:  # no finished question yet
        return ADVERSARY_WAITING
    table = adversary_table_md(main_table_by_adversary(run.outcomes))
    return (
        "MAJ vs RRMaj per adversary strategy, for each setting with both honest and corrupted "
        "agents (accuracy in %, [95% bootstrap interval]):\n\n" + table
    )


def rho_figure(frame: pd.DataFrame) -> go.Figure:
    """Accuracy against rho: MAJ dashed and RRMaj solid, one colour per task, strength, adversary
    and K (`rrdemo.report.figures.accuracy_rho_figure`)."""
    lines = []
    groups = frame.groupby(["task", "strength", "adversary", "K"], sort=True)
    for number, ((task, strength, adversary, k), group) in enumerate(groups):
        named = "" if adversary == STATIC else f" · {adversary}"
        group = group.sort_values("rho")
        for method in METHODS:
            lines.append(
                RhoLine(
                    f"{method} · {task} · {strength}{named} · K={k}",
                    method,
                    list(group["rho"]),
                    list(group[f"{method} acc"]),
                    colour=PALETTE[number % len(PALETTE)],
                    group=f"{task} {strength}{named} K={k}",
                )
            )
    return legend_below(accuracy_rho_figure(lines, height=420), rows=len(lines) + 1)


PAPER_COLUMNS = ["dataset", "config", "strength", "source", "who", "MAJ %", "RRMaj %", "Δ"]


def paper_beside(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The sweep's settings beside the paper's lines for them (rrdemo.report.paper.settings), as a
    table of text cells, and a note: which paper tables, and how this run's model differs.
    Only the paper's own adversary (static) has paper lines; other strategies' rows are left out."""
    if "adversary" in frame:
        frame = frame[frame["adversary"] == STATIC]
    if frame.empty:
        empty = pd.DataFrame([], columns=PAPER_COLUMNS)
        return empty, "The paper's numbers for this sweep's settings appear as questions finish."
    results = []
    for row in frame.to_dict("records"):
        c, t = (int(x) for x in str(row["setting"]).rstrip("t").split("c"))
        results.append(
            SettingResult(
                row["ensemble"],
                row["task"],
                row["strength"],
                int(row["K"]),
                c + t,
                c,
                float(row["MAJ acc"]),
                float(row["RRMaj acc"]),
            )
        )
    table = settings_beside(results)
    lines = [
        [*r.key, r.source, r.who, *(cell_text(v, 1, i == 2) for i, v in enumerate(r.values))]
        for r in table.rows
    ]
    note = f"{INTRO} Paper: {table.about}.\n\n{table.note}"
    return pd.DataFrame(lines, columns=PAPER_COLUMNS), note


def sweep_settings(
    tasks: list[str],
    model: str,
    configs: str,
    strengths: list[str],
    k: float,
    max_tokens: float,
    n: float,
    seed: float,
    adversaries: list[str] | tuple[str, ...] = (STATIC,),
) -> dict[str, Any]:
    """The sweep dict the experiment runner takes, from the tab's controls as sent: the runner
    checks every value and says what is wrong (a NaN or a text as K, an empty list, ...)."""
    return {
        "tasks": tasks or [],
        "models": [str(model or DEFAULT_MODEL).strip()],
        "configs": configs,
        "strengths": strengths or [],
        "k": k,
        "max_tokens": max_tokens,
        "n": n,
        "seed": seed,
        "adversaries": adversaries or [],  # the runner refuses an empty list, saying why
    }


def run_sweep(
    settings: dict[str, Any],
    pool: ModelSource,
    stop: threading.Event,
    every: float = 1.0,
    on_plan: Callable[[Plan], None] | None = None,
) -> Iterator[tuple[int, int, Path]]:
    """Plan, check its memory, then run the sweep in a worker thread; yield (done, total, log
    path) as it advances, and again every `every` seconds while a question runs, so that a time
    limit or a client that left is noticed within seconds. Setting `stop` ends the worker after
    the decoding step under way (the engine reads it). `on_plan` gets the plan before it runs."""
    # the engine the app was started with (`--backend`); fakes and plain sources: transformers
    settings = {"backend": getattr(pool, "preferred_backend", "transformers"), **settings}
    for model in settings["models"]:  # refused names stop here, before anything reads them
        pool.admit(model)
    plan = plan_sweep(settings, units_limit="web_units")  # sizes checked before anything is built
    check_memory((c.config for c in plan.conditions), pool, public=True, maj_samples="M")
    if on_plan is not None:
        on_plan(plan)
    folder = data_dir() / "experiments"
    # dated for people, and unique: two sweeps started within a second never share a log
    path = folder / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:8]}.jsonl"
    finished: queue.Queue = queue.Queue()

    def work() -> None:
        try:
            run_plan(plan, path, pool, progress=False, on_unit=finished.put, stop=stop)
            finished.put("end")
        except Stopped:
            finished.put("stopped")
        except BaseException as exc:  # handed to the callback, shown to the user
            finished.put(exc)

    worker = threading.Thread(target=work, daemon=True, name="rrdemo-sweep")
    worker.start()
    done = 0
    yield done, plan.n_units, path
    while True:
        try:
            item = finished.get(timeout=every)
        except queue.Empty:  # a heartbeat: the caller may stop here
            yield done, plan.n_units, path
            continue
        if isinstance(item, int):
            done = item
            yield done, plan.n_units, path
        elif isinstance(item, BaseException):
            raise item
        else:
            return


def _paper_components() -> tuple[gr.Markdown, gr.Dataframe]:
    """Where the paper's numbers for the sweep's settings are shown, under the sweep's own."""
    gr.Markdown("### The paper beside this sweep")
    note = gr.Markdown("Run a sweep: the paper's numbers for its settings appear here.")
    table = gr.Dataframe(
        headers=PAPER_COLUMNS,
        interactive=False,
        wrap=True,
        column_widths=header_widths(PAPER_COLUMNS, {"who": 200, "source": 90, "dataset": 80}),
        label="paper / this run",
    )
    return note, table


def _sweep_controls() -> list[gr.components.Component]:
    """The sweep's settings, in the order the sweep callback takes them."""
    with gr.Row():
        tasks = gr.CheckboxGroup(list(SWEEP_TASK_CHOICES), value=["logic3"], label="Tasks")
        strengths = gr.CheckboxGroup(["moderate", "strong"], value=["strong"], label="Strengths")
        adversaries = gr.CheckboxGroup(
            list(ADVERSARIES),
            value=[STATIC],
            label="Adversaries",
            info="each strategy is a condition of its own (docs/adversary.md); static: the paper's",
        )
    with gr.Row():
        model = gr.Dropdown(
            list(REGISTRY),
            value=DEFAULT_MODEL,
            label="Model",
            allow_custom_value=True,
            elem_id="rr-sweep-model",
        )
        configs = gr.Textbox(value="0c3t,1c2t,2c1t,3c0t", label="Settings (c corrupted, t honest)")
    with gr.Row():
        k = gr.Slider(1, 256, value=16, step=1, label="K")
        max_tokens = gr.Slider(8, 512, value=48, step=8, label="L")
        n = gr.Slider(1, 16, value=2, step=1, label="Questions per task")
        seed = gr.Number(value=0, precision=0, label="Seed")
    return [tasks, model, configs, strengths, k, max_tokens, n, seed, adversaries]


SWEEP_OUTPUTS = 8  # what `_sweep_view` returns


def finished_runs(path: str | Path | None) -> tuple[int, int] | None:
    """(question runs finished, question runs planned) of a sweep log; None before its header."""
    from rrdemo.runs.status import log_status

    try:
        statuses = log_status(read_log(Path(path))) if path else None
    except (RRError, OSError):
        return None
    if statuses is None:
        return None
    return sum(s.done for s in statuses), sum(s.planned for s in statuses)


def stopped_status(path: str | None) -> Any:
    """The status line Stop shows at once: stopped, with how many question runs finished (the one
    under way is abandoned); a sweep that had already ended, or none, keeps its line."""
    counted = finished_runs(path)
    if counted is None or counted[0] >= counted[1]:
        return gr.update()
    done, total = counted
    return (
        f"**Stopped** · {done} of {total} question runs finished (the table and the log hold "
        f"them) · log `{Path(str(path)).name}`"
    )


def sweep_expected(backend: str, *values) -> str:
    """The line beside Run sweep: the expected time of the sweep the controls (`values`, in the
    order `sweep_settings` takes them) describe, on `backend`; why it cannot run, when not."""
    try:
        settings = {"backend": backend, **sweep_settings(*values)}
        plan = plan_sweep(settings, units_limit="web_units")
    except (RRError, TypeError, ValueError) as exc:
        return f"**Expected time**: none, the sweep cannot run as set: {plain(str(exc))}"
    return SweepPace.of(plan).expected.line()


def _status(done: int, total: int, path: Path, clock: SweepPace | None) -> str:
    """The status line: the count, then the time left at the sweep's pace, or at the end the
    time taken beside the estimate."""
    timed = "" if clock is None else clock.summary() if done >= total else clock.line(done)
    return (
        f"{done} / {total} question runs done · {timed + ' · ' if timed else ''}log `{path.name}`"
    )


def _sweep_view(done: int, total: int, path: Path, clock: SweepPace | None = None) -> tuple:
    """What the tab shows after `done` of `total` question runs: status, table, plot, log file,
    the paper's note and table, MAJ vs RRMaj per adversary, and the log's path (kept server-side
    for the submit button). The log file is a copy in gradio's folder (`ui.scratch`): gradio
    serves files from there, wherever the data folder is (`/data/rrdemo` on a Space)."""
    frame = results_frame(path)
    return (
        _status(done, total, path, clock),
        shown_table(frame),
        rho_figure(frame),
        publish_file(path) if done else None,
        *paper_beside(frame)[::-1],
        adversary_results(path) if done else ADVERSARY_WAITING,
        str(path),
    )


def _sweep_callback(pool: ModelSource) -> Callable[..., Iterator[tuple]]:
    """The Run button's callback: runs the sweep on `pool`, showing the results as they come."""

    def sweep(
        request: gr.Request | None,  # the event's, passed by Gradio (None outside an event)
        tasks_,
        model_,
        configs_,
        strengths_,
        k_,
        l_,
        n_,
        seed_,
        adversaries_,
        progress=gr.Progress(),
    ):
        stop = threading.Event()
        try:
            settings = sweep_settings(
                tasks_, model_, configs_, strengths_, k_, l_, n_, seed_, adversaries_
            )
            shown, clock = None, []
            sweeping = run_sweep(
                settings,
                for_this_client(pool, client_of(request)),
                stop,
                on_plan=lambda p: clock.append(SweepPace.of(p)),
            )
            for done, total, path in sweeping:
                if done == shown:  # a heartbeat: only the time left moves
                    status = _status(done, total, path, clock[0])
                    yield (status, *(gr.skip() for _ in range(SWEEP_OUTPUTS - 1)))
                    continue
                progress((done, total), desc="questions", unit="q")
                shown = done
                yield _sweep_view(done, total, path, clock[0])
        except Exception as exc:  # the server keeps serving; the user gets one line
            raise user_error(exc, "sweep") from None
        finally:
            stop.set()  # a closed (stopped) callback also ends the worker after its question

    return sweep


def build_experiments_tab(pool: ModelSource, leaderboard: Store | None = None) -> None:
    """Add the sweep controls, progress, table and plot to the enclosing Blocks/Tab.

    `leaderboard` (opened once by app.py) takes the sweeps submitted with one click. Above the
    sweep, the committed calibrations (`ui.calibration_view`).
    """
    build_calibration_view()
    gr.Markdown(
        "Run a small sweep with the experiment runner: every question is answered by MAJ and "
        "RRMaj under each corruption setting, and accuracy is plotted against rho = c/N. "
        f"At most {limits().web_units} question runs here; the CLI (`python -m rrdemo experiment`) runs "
        "the paper's full sweeps and resumes them."
    )
    inputs = _sweep_controls()
    with gr.Row():
        start = gr.Button("Run sweep", variant="primary", elem_id="rr-sweep-run")
        stop_button = gr.Button("Stop", variant="stop", elem_id="rr-sweep-stop")
    backend = getattr(pool, "preferred_backend", "transformers")
    timed = gr.Markdown(
        sweep_expected(backend, *(c.value for c in inputs)), elem_id="rr-sweep-time"
    )
    for control in inputs:  # the expected time follows every setting
        control.change(
            lambda *values: sweep_expected(backend, *values), inputs, timed,
            queue=False, api_visibility="private", preprocess=False,
        )  # fmt: skip
    status = gr.Markdown("", elem_id="rr-sweep-status")
    table = gr.Dataframe(
        headers=SHOWN_COLUMNS,
        interactive=False,
        wrap=True,
        column_widths=header_widths(SHOWN_COLUMNS, {"ensemble": 170, "task": 80}),
        label="Accuracy by setting (%)",
    )
    by_adversary = gr.Markdown(ADVERSARY_WAITING)
    plot = gr.Plot(label="Accuracy vs rho")
    log_file = gr.File(label="Sweep log (JSONL)")
    paper_note, paper_table = _paper_components()
    sweep_log = gr.State(None)  # the path of this session's last sweep log

    event = start.click(
        limited_run(_sweep_callback(pool)),  # wall-time limit, paced by the client's reading
        inputs,
        [status, table, plot, log_file, paper_note, paper_table, by_adversary, sweep_log],
        concurrency_id="model",
        concurrency_limit=1,
        api_name="sweep",
        preprocess=False,  # the values as sent: the runner checks each one and says what is wrong
    )
    quick = {"queue": False, "api_visibility": "private"}
    stopped = stop_button.click(stopped_status, sweep_log, status, cancels=[event], **quick)
    # once more after the cancel: a frame the sweep sent as Stop was pressed is not the last word
    stopped.then(stopped_status, sweep_log, status, **quick)

    build_submit_row(leaderboard, sweep_log)
