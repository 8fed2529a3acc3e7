"""A calibration log's answers read again with the current rules (`rrdemo reextract` on one).

Each answer record keeps its text and finish reason; it is extracted again exactly as the run
extracts it (`rrdemo.calibration.runner.scored`, the task reading that question), and its answer,
correct and obeyed fields are replaced. Counted per cell: answers changed (answer -> none,
none -> answer, other), and ceiling / obedience material (right, obeyed) before and after. With
a token counter, where each answer first states an answer is counted again too (`stated_at`,
`rrdemo.calibration.stated`); without one, the positions the log holds stay.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

from rrdemo.calibration.log import read_calibration
from rrdemo.calibration.runner import scored
from rrdemo.calibration.stated import stated_at
from rrdemo.errors import RRError
from rrdemo.jsonl import dump_record
from rrdemo.runs.reextract import questions_by_id
from rrdemo.tasks import get_task


def reextract_calibration(
    path: Path | str, count_for: Callable[[str], Callable[[str], int]] | None = None
) -> tuple[dict[str, Counter], list[dict]]:
    """Tallies per cell and the log's records (header first) with the answers read again;
    `count_for(model)` gives that model's token counter to count statement positions again."""
    log = read_calibration(path)
    source = log.header["settings"].get("source") or "auto"
    tallies: dict[str, Counter] = defaultdict(Counter)
    records = [log.header]
    for answer in log.answers:
        question = questions_by_id(answer["task"], source).get(answer["question_id"])
        if question is None:
            raise RRError(
                f"question {answer['question_id']!r} is not in {answer['task']}'s data "
                f"({source} source); re-extract the log where its data set is installed"
            )
        task = get_task(answer["task"]).for_question(question)
        new = {
            **answer,
            **scored(
                task, answer["text"], answer["finish_reason"], answer["gold"], answer["target"]
            ),
        }
        if count_for is not None:
            new["stated_at"] = stated_at(task, new, count_for(answer["model"]))
        _count(tallies[answer["cell"]], answer, new)
        records.append(new)
    return tallies, records


def _count(tally: Counter, old: dict, new: dict) -> None:
    tally["n"] += 1
    for field in ("correct", "obeyed"):
        tally[f"old_{field}"] += bool(old[field])
        tally[f"new_{field}"] += bool(new[field])
    if old.get("stated_at") != new.get("stated_at"):
        tally["positions"] += 1
    if old["answer"] != new["answer"]:
        tally["changed"] += 1
        kind = "answer->none" if new["answer"] is None else "other"
        tally["none->answer" if old["answer"] is None else kind] += 1


def calibration_table(tallies: dict[str, Counter]) -> str:
    """The tallies as a markdown table: one line per cell that changed, then the total."""
    total: Counter = Counter()
    lines = [
        "| cell | answers | changed | answer->none | none->answer | other |"
        " right (old -> new) | obeyed (old -> new) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for t in tallies.values():
        total.update(t)
    changed = [(cell, t) for cell, t in sorted(tallies.items()) if t["changed"]]
    for cell, t in [*changed, ("all", total)]:
        lines.append(
            f"| {cell} | {t['n']} | {t['changed']} | {t['answer->none']} | {t['none->answer']} | "
            f"{t['other']} | {t['old_correct']} -> {t['new_correct']} | "
            f"{t['old_obeyed']} -> {t['new_obeyed']} |"
        )
    return "\n".join(lines)


def write_calibration_records(path: Path | str, records: list[dict]) -> None:
    """Rewrite the log with `records` (what `reextract_calibration` returned)."""
    Path(path).write_bytes(b"".join(dump_record(r) for r in records))
