"""The runner: every (condition, question) unit of a plan, logged trajectory by trajectory.

    plan = plan_sweep({"tasks": "logic3", "configs": "0c5t,3c2t", "n": 16})
    run_plan(plan, "runs/small.jsonl", ModelPool())

A killed run resumes from the same call: the log is cut back to its last "done" line
(`rrdemo.runs.write.open_log`), so a half-finished unit is redone from scratch and nothing is lost
or counted twice.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from rrdemo.errors import RRError
from rrdemo.fold import Fold
from rrdemo.protocols import run_question
from rrdemo.runs.gang import Gang, GangModels, flowing
from rrdemo.runs.record import Unit, done_record, trajectory_record
from rrdemo.runs.spec import Condition, Plan
from rrdemo.runs.write import open_log
from rrdemo.tasks.base import Question


# -- running --------------------------------------------------------------------------------------
def unit_records(condition: Condition, question: Question, events: Iterable) -> Iterator[dict]:
    """Turn one question's event stream into log records: a trajectory record as each MAJ answer
    or RR trajectory finishes, then the unit's "done" record with votes and compute (the fold's
    objects, written by `rrdemo.runs.record`)."""
    state = Fold()

    def unit() -> Unit:
        return Unit(condition.key, question.qid, question.gold, state.target)

    for event in events:
        finished = state.apply(event)
        if finished is not None:
            yield trajectory_record(unit(), finished)
    yield done_record(unit(), state.methods.values())


@dataclass
class RunSummary:
    units_total: int
    units_skipped: int  # already in the log when the run started
    units_run: int
    decode_tokens: int
    wall_s: float


def unit_order(
    plan: Plan, shard: tuple[int, int] | None = None
) -> list[tuple[Condition, Question]]:
    """The (condition, question) units a run takes, in its order: question-major (the first
    question under every condition, then the second, ...), so a run stopped early has every
    condition measured on the same questions; `shard=(i, n)` keeps every n-th from the i-th."""
    units = [(j, i, c, q) for i, c in enumerate(plan.conditions) for j, q in enumerate(c.questions)]
    order = [(c, q) for _, _, c, q in sorted(units, key=lambda u: u[:2])]
    if shard is not None:
        index, count = shard
        if not 1 <= index <= count:
            raise ValueError(f"shard must be i/n with 1 <= i <= n, got {index}/{count}")
        order = order[index - 1 :: count]
    return order


def run_plan(
    plan: Plan,
    log_path: Path | str,
    models: Any,
    *,
    progress: bool = True,
    on_unit: Callable[[int], None] | None = None,
    workers: int = 1,
    shard: tuple[int, int] | None = None,
    stop: threading.Event | None = None,
    flow: bool = False,
) -> RunSummary:
    """Run every (condition, question) unit not yet in the log, appending records as they finish.

    `models` is anything with `get(name, revision)` (a `ModelPool`, or a fake in tests).
    `on_unit(i)` is called after the i-th unit of this call is safely written. `workers` > 1 runs
    that many units at once, each unit's records written together when it is done: in waves whose
    calls are merged into one batch (`rrdemo.runs.gang`), or with `flow` (every agent on
    llama.cpp) sharing every decoding step, a unit that ends making room for the next at once
    (`rrdemo.backends.llamacpp_flow`; bench/README.md says when that pays). `shard=(i, n)`
    runs only every n-th unit of the order, starting with the i-th (1-based): n processes or
    machines share a sweep, each with its own log, joined afterwards by `merge_logs`. Setting
    `stop` (another thread: a time limit, a client that left) ends the run inside its current
    unit, after the decoding step under way, with `rrdemo.errors.Stopped`; that unit is not
    written.
    """
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if flow and not all_llamacpp(plan):
        raise RRError("a flow (continuous batching) needs every agent on llama.cpp")
    order = unit_order(plan, shard)
    writer, done = open_log(Path(log_path), plan)
    todo = [(c, q) for c, q in order if (c.key, q.qid) not in done]
    skipped = len(order) - len(todo)
    bar = None
    if progress:
        bar = tqdm(
            total=len(order), initial=skipped, unit="q", desc="questions", dynamic_ncols=True
        )
    start, decoded, written = time.perf_counter(), 0, 0
    lock = threading.Lock()

    def record_unit(condition: Condition, records: Iterable[dict]) -> None:
        nonlocal decoded, written
        with lock:
            for record in records:
                writer.write(record, sync=record["type"] == "done")
                if record["type"] == "done":
                    decoded += sum(c["decode_tokens"] for c in record["compute"].values())
            written += 1
            if bar is not None:
                rate = decoded / max(time.perf_counter() - start, 1e-9)
                bar.set_postfix_str(
                    f"{rate:.1f} tok/s, {condition.task.name} {condition.config.label}"
                )
                bar.update(1)
            if on_unit is not None:
                on_unit(written)

    try:
        if workers == 1:
            for condition, question in todo:  # records stream to the log as they come
                record_unit(condition, _unit(condition, question, models, stop))
        elif flow:
            # a thread per worker takes the next unit as it ends one (a whole unit or none)
            def one(unit: tuple[Condition, Question], source: Any) -> None:
                record_unit(unit[0], list(_unit(*unit, source, stop)))

            flowing(models, todo, one, workers)
        else:
            _run_together(todo, models, workers, record_unit, stop)
    finally:
        writer.close()
        if bar is not None:
            bar.close()
    return RunSummary(len(order), skipped, len(todo), decoded, time.perf_counter() - start)


def _unit(
    condition: Condition, question: Question, models: Any, stop: threading.Event | None = None
) -> Iterator[dict]:
    events = run_question(
        condition.config,
        question,
        condition.task,
        models,
        methods=condition.methods,
        maj_samples=condition.config.resolved_m,
        stop=stop,
    )
    return unit_records(condition, question, events)


def all_llamacpp(plan: Plan) -> bool:
    """Whether every agent of every condition runs on llama.cpp (continuous batching's engine)."""
    return all(a.backend == "llamacpp" for c in plan.conditions for a in c.config.agents)


def _run_together(
    todo: list[tuple[Condition, Question]],
    models: Any,
    workers: int,
    record_unit: Callable[[Condition, Iterable[dict]], None],
    stop: threading.Event | None = None,
) -> None:
    """`workers` units at a time, one thread each; their model calls go to the model as one batch."""
    errors: list[BaseException] = []
    # Units go in waves of `workers` that start together: MAJ's long answers then run in one
    # batch and RRMaj's short turns in another (a unit starting alone would make every other
    # unit's turn wait for its answers).
    for first in range(0, len(todo), workers):
        gang = Gang()
        source = GangModels(models, gang)

        def work(
            condition: Condition, question: Question, gang: Gang = gang, source=source
        ) -> None:
            try:
                records = list(_unit(condition, question, source, stop))  # a whole unit or none
                record_unit(condition, records)
            except BaseException as error:
                errors.append(error)
            finally:
                gang.leave()

        wave = todo[first : first + workers]
        threads = [threading.Thread(target=work, args=unit, daemon=True) for unit in wave]
        for _ in threads:
            gang.join()  # before any starts: the first call waits for every thread's
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
