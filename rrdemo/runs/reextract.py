"""Re-extract the answers of an experiment log with the current rules, vote again, say what changed.

    rrdemo reextract assets/experiment_small.jsonl            # report only
    rrdemo reextract assets/experiment_small.jsonl --write    # and rewrite the log

Each trajectory record holds its chunks, its finish reason and the answer extracted when it was
logged. Every finished unit is concluded again exactly as a run concludes it
(`rrdemo.protocols._conclude`: extraction with the real finish reason, vote keys, plurality with
the run's tie seed). Printed per task and method and in total: how many trajectory answers
changed (answer -> none, none -> answer, answer -> other answer), how many MAJ / RRMaj decisions
changed, and trajectory accuracy and fooled rate with the logged and the new answers. With
`--write` the trajectory records (answer, vote key, correct, fooled) and the `done` records'
votes are replaced; texts, compute and everything else stay as logged.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

from rrdemo.config import RunConfig
from rrdemo.errors import RRError
from rrdemo.events import AnswerExtracted
from rrdemo.fold import Fold
from rrdemo.jsonl import dump_record
from rrdemo.protocols import Final, _conclude, _tie
from rrdemo.runs.record import done_record, read_done, read_trajectory, trajectory_record
from rrdemo.tasks import get_task, load_questions
from rrdemo.tasks.base import Question


def _final(record: dict) -> Final:
    text = "".join(chunk["text"] for chunk in record["chunks"])
    return Final(
        record["trajectory"],
        text,
        record["n_tokens"],
        record["finish_reason"],
        record["last_agent"],
    )


def logged_question(task: str, done: dict, source: str | None) -> Question:
    """The question of a `done` record as the run asked it (its options read by letter tasks),
    from the sweep's data source; the bare id and gold for a task with no data set."""
    if task == "custom":
        return Question(task, done["question_id"], "", gold=done["gold"])
    question = questions_by_id(task, source or "auto").get(done["question_id"])
    if question is None:
        raise RRError(
            f"question {done['question_id']!r} is not in {task}'s data ({source or 'auto'} source);"
            " re-extract the log where the run's data set is installed"
        )
    return replace(question, gold=done["gold"])


@lru_cache(maxsize=16)
def questions_by_id(task: str, source: str) -> dict[str, Question]:
    """Every question of a task, by id."""
    return {question.qid: question for question in load_questions(task, source=source)}


def conclude_again(
    condition: dict, done: dict, trajectories: list[dict], source: str | None = None
) -> dict[str, list]:
    """The events of concluding each method of one unit again: AnswerExtracted..., Vote, Decision.
    `source`: the sweep's data source, where the question is read from (`logged_question`)."""
    task = get_task(condition["task"])
    config = RunConfig.from_dict(condition["config"])
    agents = [SimpleNamespace(corrupted=a["corrupted"]) for a in condition["config"]["agents"]]
    question = logged_question(task.name, done, source)
    task = task.for_question(question)  # as the run read it: a letter task knows the options
    events: dict[str, list] = {}
    for method in done["votes"]:
        records = sorted(
            (r for r in trajectories if r["method"] == method), key=lambda r: r["trajectory"]
        )
        finals = [_final(r) for r in records]
        tie = _tie(config, question, method)
        events[method] = list(
            _conclude(method, finals, agents, task, question, done["target"], tie)
        )
    return events


def reextract(path: Path) -> tuple[dict[tuple[str, str], Counter], list[dict]]:
    """Tallies per (task, method) and the log's records with the new answers and votes."""
    tallies: dict[tuple[str, str], Counter] = defaultdict(Counter)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    conditions = {c["key"]: c for c in records[0]["conditions"]}
    source = records[0].get("sweep", {}).get("source")
    pending: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for record in records:
        unit = (record.get("condition"), record.get("question_id"))
        if record["type"] == "trajectory":
            pending[unit].append(record)
        if record["type"] != "done":
            continue
        condition = conditions[record["condition"]]
        task = get_task(condition["task"])
        unit_records = pending.pop(unit)
        for method, events in conclude_again(condition, record, unit_records, source).items():
            tally = tallies[(task.name, method)]
            by_index = {r["trajectory"]: r for r in unit_records if r["method"] == method}
            fold = Fold()
            for event in events:
                fold.apply(event)
                if isinstance(event, AnswerExtracted):
                    logged = by_index[event.trajectory]
                    _count_answer(tally, logged, event, task)
                    unit, trajectory = read_trajectory(logged)
                    logged.update(trajectory_record(unit, replace(trajectory, answer=event)))
            new = done_record(read_done(record)[0], fold.methods.values())["votes"][method]
            old = record["votes"][method]
            tally["decisions"] += 1
            tally["decision_changed"] += new["answer"] != old["answer"]
            tally["decision_old_correct"] += bool(old["correct"])
            tally["decision_new_correct"] += bool(new["correct"])
            record["votes"][method] = new
    return tallies, records


def _count_answer(tally: Counter, record: dict, event: AnswerExtracted, task) -> None:
    old, new = record["answer"], event.answer
    tally["n"] += 1
    tally["cut_off"] += record["finish_reason"] == "length"
    tally["old_correct"] += task.is_correct(old, record["gold"])
    tally["new_correct"] += bool(event.correct)
    tally["old_fooled"] += bool(record["fooled"])
    tally["new_fooled"] += event.fooled
    if old != new:
        tally["changed"] += 1
        tally["answer->none" if new is None else "none->answer" if old is None else "other"] += 1


def table(tallies: dict[tuple[str, str], Counter]) -> str:
    """The tallies as a markdown table: one line per (task, method), then the total."""
    total: Counter = Counter()
    lines = [
        "| task | method | trajectories | cut off at L | answers changed | answer->none |"
        " none->answer | other | decisions changed | trajectory accuracy (old -> new) |"
        " fooled (old -> new) | decision accuracy (old -> new) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (task, method), t in sorted(tallies.items()) + [(("all", ""), total)]:
        if task != "all":
            total.update(t)
        n, decisions = max(t["n"], 1), max(t["decisions"], 1)
        lines.append(
            f"| {task} | {method} | {t['n']} | {t['cut_off']} | {t['changed']} | "
            f"{t['answer->none']} | {t['none->answer']} | {t['other']} | "
            f"{t['decision_changed']} of {t['decisions']} | "
            f"{t['old_correct'] / n:.1%} -> {t['new_correct'] / n:.1%} | "
            f"{t['old_fooled'] / n:.1%} -> {t['new_fooled'] / n:.1%} | "
            f"{t['decision_old_correct'] / decisions:.1%} -> "
            f"{t['decision_new_correct'] / decisions:.1%} |"
        )
    return "\n".join(lines)


def write_records(path: Path, records: list[dict]) -> None:
    """Rewrite the log with `records` (what `reextract` returned)."""
    path.write_bytes(b"".join(dump_record(r) for r in records))
