"""The Experiments tab: a small sweep run in the background, with progress, a table and a plot.

The sweep goes through the experiment runner (`rrdemo.experiment.plan_sweep` / `run_plan`), which
logs every trajectory to a JSONL file under the data dir. A worker thread runs it; the callback
re-reads the log as units finish and shows accuracy against rho for MAJ and RRMaj, and MAJ vs RRMaj
per adversary strategy when the sweep has several (`rrdemo.adversary_report`). Stop ends the
sweep after the question being run (the log stays valid and can be resumed by the CLI).
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import gradio as gr
import pandas as pd
import plotly.graph_objects as go

from rrdemo.adversary_report import adversary_table_md, main_table_by_adversary
from rrdemo.agents import ModelSource
from rrdemo.config import ADVERSARIES, LATER_FIELDS
from rrdemo.engines.registry import DEFAULT_MODEL, REGISTRY
from rrdemo.errors import RRError
from rrdemo.paper.beside import INTRO, cell_text
from rrdemo.paper.settings import SettingResult, settings_beside
from rrdemo.paths import data_dir
from ui.choices import SWEEP_TASK_CHOICES

MAX_UNITS = 48  # questions x conditions a web sweep may run; bigger sweeps belong to the CLI
METHODS = ("MAJ", "RRMaj")
STATIC = str(LATER_FIELDS["adversary"])  # the paper's adversary, the default strategy
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


class _Stopped(Exception):
    """Raised inside the worker to end a sweep the user stopped."""


def read_results(path: Path) -> pd.DataFrame:
    """Accuracy and fooled rate per condition from a sweep log (finished questions only)."""
    conditions: dict[str, dict] = {}
    tallies: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line being written right now
            if record.get("type") == "header":
                conditions = {c["key"]: c for c in record.get("conditions", [])}
            elif record.get("type") == "done":
                for method in METHODS:
                    vote = record.get("votes", {}).get(method, {})
                    tallies[record["condition"]][method].append(
                        (bool(vote.get("correct")), bool(vote.get("fooled")))
                    )
    rows = []
    for key, by_method in tallies.items():
        c = conditions.get(key, {})
        rate = {
            m: (
                sum(ok for ok, _ in by_method[m]) / len(by_method[m]),
                sum(f for _, f in by_method[m]) / len(by_method[m]),
            )
            for m in METHODS
            if by_method[m]
        }
        if len(rate) < len(METHODS):
            continue
        rows.append(
            [
                c.get("task", "?"),
                c.get("ensemble", "?"),
                c.get("label", "?"),
                round(c["c"] / c["n"], 3) if c.get("n") else None,
                c.get("strength", "?"),
                c.get("adversary", STATIC),  # the header names it only when not static
                c.get("k"),
                len(by_method["MAJ"]),
                round(rate["MAJ"][0], 3),
                round(rate["RRMaj"][0], 3),
                round(rate["RRMaj"][0] - rate["MAJ"][0], 3),
                round(rate["MAJ"][1], 3),
                round(rate["RRMaj"][1], 3),
            ]
        )
    frame = pd.DataFrame(rows, columns=COLUMNS)
    order = ["task", "strength", "adversary", "K", "rho"]
    return frame.sort_values(order).reset_index(drop=True)


ADVERSARY_WAITING = "MAJ vs RRMaj per adversary strategy appears as questions finish."


def adversary_results(path: Path) -> str:
    """MAJ vs RRMaj per adversary strategy and corrupted setting, with 95% intervals, as the
    report prints it (`rrdemo.adversary_report`); a waiting note until a question has finished."""
    from rrdemo.report import read_run  # noqa: PLC0415 - the report loads on use

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
    """Accuracy against rho: one solid line (RRMaj) and one dashed (MAJ) per task and strength."""
    fig = go.Figure()
    for (task, strength, adversary, k), group in frame.groupby(
        ["task", "strength", "adversary", "K"], sort=True
    ):
        named = "" if adversary == STATIC else f" · {adversary}"
        group = group.sort_values("rho")
        for method, dash in (("MAJ", "dash"), ("RRMaj", "solid")):
            fig.add_trace(
                go.Scatter(
                    x=group["rho"],
                    y=group[f"{method} acc"],
                    mode="lines+markers",
                    line={"dash": dash},
                    name=f"{method} · {task} · {strength}{named} · K={k}",
                )
            )
    fig.add_vline(x=0.5, line_dash="dot", line_color="#71717a", annotation_text="majority")
    fig.update_layout(
        xaxis_title="rho = c/N (corrupted fraction)",
        yaxis_title="accuracy",
        yaxis={"range": [-0.02, 1.02]},
        xaxis={"range": [-0.02, 1.02]},
        height=420,
        margin={"l": 60, "r": 20, "t": 30, "b": 50},
    )
    return fig


PAPER_COLUMNS = ["dataset", "config", "strength", "source", "who", "MAJ %", "RRMaj %", "Δ"]


def paper_beside(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The sweep's settings beside the paper's lines for them (rrdemo.paper.settings), as a
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
    labels = ", ".join(f"`{x}`" for x in table.labels)
    note = f"{INTRO} Paper: {labels}; {table.about}.\n\n{table.note}"
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
    """The sweep dict the experiment runner takes, from the tab's controls."""
    return {
        "tasks": list(tasks or []),
        "models": [(model or DEFAULT_MODEL).strip()],
        "configs": configs,
        "strengths": list(strengths or []),
        "k": [int(k)],
        "max_tokens": int(max_tokens),
        "n": int(n),
        "seed": int(seed),
        "adversaries": list(adversaries or []),  # the runner refuses an empty list, saying why
    }


def run_sweep(
    settings: dict[str, Any], pool: ModelSource, stop: threading.Event, every: float = 1.0
):  # type: ignore[no-untyped-def]
    """Plan, then run the sweep in a worker thread; yield (done, total, log path) as it advances."""
    from rrdemo.experiment import plan_sweep, run_plan  # noqa: PLC0415 - the runner loads on use

    # the engine the app was started with (`--backend`); fakes and plain sources: transformers
    settings = {"backend": getattr(pool, "preferred_backend", "transformers"), **settings}
    plan = plan_sweep(settings)
    if plan.n_units > MAX_UNITS:
        raise RRError(
            f"this sweep has {plan.n_units} question runs; the web app runs at most {MAX_UNITS} "
            "(fewer questions, configs or tasks), use `python -m rrdemo experiment` for more"
        )
    folder = data_dir() / "experiments"
    path = folder / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}-{threading.get_ident() % 10000}.jsonl"
    finished: queue.Queue = queue.Queue()

    def on_unit(i: int) -> None:
        finished.put(i)
        if stop.is_set():
            raise _Stopped

    def work() -> None:
        try:
            run_plan(plan, path, pool, progress=False, on_unit=on_unit)
            finished.put("end")
        except _Stopped:
            finished.put("stopped")
        except BaseException as exc:  # noqa: BLE001 - handed to the callback, shown to the user
            finished.put(exc)

    worker = threading.Thread(target=work, daemon=True, name="rrdemo-sweep")
    worker.start()
    done = 0
    yield done, plan.n_units, path
    while True:
        try:
            item = finished.get(timeout=every)
        except queue.Empty:
            continue
        if isinstance(item, int):
            done = item
            yield done, plan.n_units, path
        elif isinstance(item, BaseException):
            raise item
        else:
            return


def submit_sweep(log_path: str | None, submitter: str) -> str:
    """One click after a sweep: its log becomes a leaderboard submission (pending approval)."""
    from leaderboard.schema import validate_submission  # noqa: PLC0415
    from leaderboard.service import submit_from_app  # noqa: PLC0415
    from rrdemo.cli.export import build_submission  # noqa: PLC0415

    if not log_path:
        raise RRError("run a sweep first: there is no sweep log to submit")
    if not (submitter or "").strip():
        raise RRError("type your name (1-100 characters) so the leaderboard can show who submitted")
    data = build_submission(
        log_path, submitter.strip(), notes="submitted from the app's Experiments tab"
    )
    outcome = submit_from_app(validate_submission(data))
    return outcome.message


def _paper_components() -> tuple[gr.Markdown, gr.Dataframe]:
    """Where the paper's numbers for the sweep's settings are shown, under the sweep's own."""
    gr.Markdown("### The paper beside this sweep")
    note = gr.Markdown("Run a sweep: the paper's numbers for its settings appear here.")
    table = gr.Dataframe(headers=PAPER_COLUMNS, interactive=False, label="paper / this run")
    return note, table


def build_experiments_tab(pool: ModelSource) -> None:
    """Add the sweep controls, progress, table and plot to the enclosing Blocks/Tab."""
    gr.Markdown(
        "Run a small sweep with the experiment runner: every question is answered by MAJ and "
        "RRMaj under each corruption setting, and accuracy is plotted against rho = c/N. "
        f"At most {MAX_UNITS} question runs here; the CLI (`python -m rrdemo experiment`) runs "
        "the paper's full sweeps and resumes them."
    )
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
            list(REGISTRY), value=DEFAULT_MODEL, label="Model", allow_custom_value=True
        )
        configs = gr.Textbox(
            value="0c3t,1c2t,2c1t,3c0t", label="Settings (c corrupted, t truthful)"
        )
    with gr.Row():
        k = gr.Slider(1, 256, value=16, step=1, label="K")
        max_tokens = gr.Slider(8, 512, value=48, step=8, label="L")
        n = gr.Slider(1, 16, value=2, step=1, label="Questions per task")
        seed = gr.Number(value=0, precision=0, label="Seed")
    with gr.Row():
        start = gr.Button("Run sweep", variant="primary", elem_id="rr-sweep-run")
        stop_button = gr.Button("Stop", variant="stop")
    status = gr.Markdown("")
    table = gr.Dataframe(headers=COLUMNS, interactive=False, label="Accuracy by setting")
    by_adversary = gr.Markdown(ADVERSARY_WAITING)
    plot = gr.Plot(label="Accuracy vs rho")
    log_file = gr.File(label="Sweep log (JSONL)")
    paper_note, paper_table = _paper_components()

    def sweep(  # type: ignore[no-untyped-def]
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
        settings = sweep_settings(
            tasks_, model_, configs_, strengths_, k_, l_, n_, seed_, adversaries_
        )
        try:
            for done, total, path in run_sweep(settings, pool, stop):
                progress((done, total), desc="questions", unit="q")
                frame = read_results(path)
                yield (
                    f"{done} / {total} question runs done · log `{path.name}`",
                    frame,
                    rho_figure(frame),
                    str(path) if done else None,
                    *paper_beside(frame)[::-1],
                    adversary_results(path) if done else ADVERSARY_WAITING,
                )
        except RRError as exc:
            raise gr.Error(str(exc), print_exception=False) from None
        except Exception as exc:  # the server keeps serving; the user gets one line
            message = "out of memory" if type(exc).__name__.endswith("MemoryError") else str(exc)
            raise gr.Error(f"the sweep failed ({type(exc).__name__}): {message[:200]}") from None
        finally:
            stop.set()  # a closed (stopped) callback also ends the worker after its question

    event = start.click(
        sweep,
        [tasks, model, configs, strengths, k, max_tokens, n, seed, adversaries],
        [status, table, plot, log_file, paper_note, paper_table, by_adversary],
        concurrency_id="model",
        concurrency_limit=1,
        api_name="sweep",
    )
    stop_button.click(None, None, None, cancels=[event], api_visibility="private")

    with gr.Row():
        submitter = gr.Textbox(label="Your name (shown on the leaderboard)", scale=3)
        submit_button = gr.Button("Submit this sweep to the leaderboard", scale=2)
    submit_status = gr.Markdown("")

    def submit(path, name):  # type: ignore[no-untyped-def]
        try:
            return submit_sweep(path, name)
        except RRError as exc:
            raise gr.Error(str(exc), print_exception=False) from None

    submit_button.click(submit, [log_file, submitter], submit_status, api_name="submit_sweep")
