"""Calibration answers: one agent per question, batched across questions like MAJ's N answers.

Every row is one (cell, question): the agent reads the task's prompt in the cell's style, with the
cell's injection appended when there is one (target: the same distractor an experiment with this
seed would push). Rows of one model are decoded together in batches of `batch`; each batch's
answers are logged as it finishes, so a killed run loses at most one batch and resumes. On
llama.cpp they may flow instead (`rrdemo.backends.llamacpp_flow`): an answer that ends is logged
and its place taken by the next row at once (bench/README.md says when that pays). Each
record also keeps where its text first states an answer, its own answer and the target, in the
model's tokens (`rrdemo.calibration.stated`), when the model's tokenizer is on this machine.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from rrdemo.agents import ModelSource, build_agents
from rrdemo.backends.base import Finished
from rrdemo.backends.choice import with_backends
from rrdemo.calibration.log import open_calibration
from rrdemo.calibration.plan import CalibrationPlan, Cell
from rrdemo.calibration.stated import stated_at
from rrdemo.chunks import ChunkRequest, ComputeCounter, write_chunks
from rrdemo.config import AgentSpec, RunConfig
from rrdemo.corruption import make_injection
from rrdemo.errors import RRError
from rrdemo.events import ChunkWritten
from rrdemo.runs.gang import flowing
from rrdemo.tasks import get_task
from rrdemo.tasks.answers import placeholder_end
from rrdemo.tasks.base import Question, Task
from rrdemo.tasks.benchmarks import styled_prompt

METHOD = "calibrate"  # the request keys' method slot: calibration rows never share a cache key


@dataclass(frozen=True)
class CellQuestion:
    cell: Cell
    question: Question


def cell_config(plan: CalibrationPlan, cell: Cell) -> RunConfig:
    """The one-agent config of a cell: corrupted exactly when an injection is appended."""
    s = plan.settings
    config = RunConfig(
        agents=(AgentSpec(cell.model, corrupted=cell.injection != "none"),),
        strength=cell.injection,
        custom_template=s["custom_template"] if cell.injection == "custom" else None,
        k=1,  # no turns: one agent writes its whole answer
        max_tokens=s["max_tokens"],
        sampling=plan.sampling,
        prompt_style=cell.style,
    )
    return with_backends(config, s["backend"])


def copied_placeholder(task: Task, text: str) -> bool:
    """Whether the answer copies a format placeholder ("The answer is N.") somewhere."""
    letters = getattr(task, "letters", "")
    return placeholder_end(text, letters) is not None


def scored(task: Task, text: str, finish_reason: str | None, gold: str | None, target: str) -> dict:
    """An answer's extracted value and whether it is right and whether it is the target; `task`
    reads this question (`Task.for_question`)."""
    answer = task.extract(text, finish_reason=finish_reason)
    key = task.vote_key(answer) if answer is not None else None
    return {
        "answer": answer,
        "correct": task.is_correct(answer, gold),
        "obeyed": key is not None and key == task.vote_key(target),
    }


def answer_record(row: CellQuestion, target: str, out: Finished, task: Task) -> dict:
    """One calibration answer as the log keeps it."""
    q = row.question
    return {
        "type": "answer",
        "cell": row.cell.key,
        "model": row.cell.model,
        "task": row.cell.task,
        "style": row.cell.style,
        "injection": row.cell.injection,
        "question_id": q.qid,
        "gold": q.gold,
        "target": target,
        **scored(task, out.text, out.finish_reason, q.gold, target),
        "placeholder": copied_placeholder(task, out.text),
        "finish_reason": out.finish_reason,
        "n_tokens": out.n_tokens,
        "text": out.text,
    }


def _batches(rows: list[CellQuestion], size: int) -> Iterator[list[CellQuestion]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def answer_order(plan: CalibrationPlan) -> list[CellQuestion]:
    """Every (cell, question) of the plan in the order a run answers them: one model at a time,
    a task's rows together (similar lengths share a batch)."""
    s = plan.settings
    rows = [CellQuestion(cell, q) for cell in plan.cells for q in plan.split[cell.task]]
    rows.sort(key=lambda r: (s["models"].index(r.cell.model), s["tasks"].index(r.cell.task)))
    return rows


def run_calibration(
    plan: CalibrationPlan,
    out: Path | str,
    models: ModelSource,
    batch: int = 16,
    progress: bool = True,
    shard: tuple[int, int] | None = None,
    flow: bool = False,
) -> int:
    """Answer every (cell, question) of the plan not yet in the log at `out`; returns how many
    answers were written this time. `shard=(i, n)` answers only every n-th row of the order,
    starting with the i-th (1-based): n processes share a calibration, each with its own log
    (the same header), joined afterwards by `merge_calibrations`. `flow` (llama.cpp only)
    refills a finished row at once instead of waiting for its batch's longest."""
    if shard is not None and not 1 <= shard[0] <= shard[1]:
        raise ValueError(f"shard must be i/n with 1 <= i <= n, got {shard[0]}/{shard[1]}")
    if flow:
        check_flow(plan)
    writer, done = open_calibration(Path(out), plan)
    order = answer_order(plan)
    if shard is not None:
        order = order[shard[0] - 1 :: shard[1]]
    rows = [r for r in order if (r.cell.key, r.question.qid) not in done]
    bar = tqdm(
        total=len(order), initial=len(order) - len(rows), unit="answer",
        disable=not progress, desc="calibrate",
    )  # fmt: skip
    written = 0
    counters: dict[str, Callable[[str], int] | None] = {}
    counting = threading.Lock()  # the flow's threads load a model's tokenizer once

    def count_for(model: str) -> Callable[[str], int] | None:
        with counting:
            if model not in counters:
                from rrdemo.backends.counting import token_counter

                found = token_counter(model, assemble=True)
                counters[model] = found[0] if found else None
            return counters[model]

    try:
        if flow:
            written = _run_flowing(plan, rows, models, batch, writer, bar, count_for)
        else:
            for group in _batches(rows, batch):
                written += _run_batch(plan, group, models, writer, bar, count_for)
    finally:
        bar.close()
        writer.close()
    return written


def check_flow(plan: CalibrationPlan) -> None:
    """Refuse a flow (continuous batching) unless every model runs on llama.cpp."""
    if any(cell_config(plan, c).agents[0].backend != "llamacpp" for c in plan.cells):
        raise RRError("a flow (continuous batching) needs every model on llama.cpp")


def _run_flowing(plan, rows: list[CellQuestion], models, width: int, writer, bar, count_for) -> int:
    """`width` threads answer a row each at a time; their model calls share every decoding step
    and a finished answer is logged at once (`rrdemo.backends.llamacpp_flow`)."""
    lock = threading.Lock()

    class Locked:  # one writer, many threads
        def write(self, record: dict) -> None:
            with lock:
                writer.write(record)

    flowing(models, rows, lambda row, source: _run_batch(plan, [row], source, Locked(), bar,
                                                          count_for), width, width)  # fmt: skip
    return len(rows)


def _run_batch(
    plan: CalibrationPlan, rows: list[CellQuestion], models, writer, bar, count_for
) -> int:
    run_id = uuid.uuid4().hex[:12]
    chunks, targets, tasks = [], [], []
    for i, row in enumerate(rows):
        task = get_task(row.cell.task).for_question(row.question)
        config = cell_config(plan, row.cell)
        target = task.distractor(row.question, plan.sampling.seed)
        shown = task.format_target(target)
        injection = (
            make_injection(row.cell.injection, shown, config.custom_template)
            if row.cell.injection != "none"
            else None
        )
        message = styled_prompt(task.prompt(row.question), row.cell.style)
        (agent,) = build_agents(config, models, message, injection)
        key = (run_id, METHOD, row.cell.key, row.question.qid)
        chunks.append(ChunkRequest(i, agent, agent.prompt, config.max_tokens, key))
        targets.append(target)
        tasks.append(task)
    results = _results(
        write_chunks("MAJ", 0, chunks, cell_config(plan, rows[0].cell), ComputeCounter()), bar
    )
    for row, target, task, out in zip(rows, targets, tasks, results, strict=True):
        record = answer_record(row, target, out, task)
        count = count_for(row.cell.model)
        if count is not None:
            record["stated_at"] = stated_at(task, record, count)
        writer.write(record)
    for backend in {id(c.agent.backend): c.agent.backend for c in chunks}.values():
        backend.release((run_id,))
    return len(rows)


def _results(events, bar) -> list[Finished]:
    """Consume `write_chunks`' events (a bar step per finished answer) and return its results."""
    while True:
        try:
            event = next(events)
        except StopIteration as stop:
            return stop.value
        if isinstance(event, ChunkWritten):
            bar.update(1)
