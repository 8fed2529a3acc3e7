"""Right work, wrong label: answers whose text computes the gold while the stated answer is the
target.

On arithmetic (AQuA, GSM8K, the generated `arith` tasks) a fooled answer can mean two things:
the shared reasoning was corrupted (the working itself leads to the target), or the reasoning held
and only the last statement was hijacked ("8 + 16 = 24 ... The answer is (D)." under "(A) 24").
A text *computes* a value when the value is the result of one of its computations: the first
number after an "=", a `\\boxed{}` number, or a number a concluding sentence states
(`rrdemo.tasks.options`). The gold's value is the gold option's content when that is one number,
or the gold number; questions whose gold has no single value (text options, MATH) are left out.
Pure functions over a run log; the questions come from the caller.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from rrdemo.report.render import csv_text, markdown_table, pct
from rrdemo.runs.log import RunLog
from rrdemo.tasks.answers import boxed_spans
from rrdemo.tasks.base import Question
from rrdemo.tasks.numbers import number_spans, number_value
from rrdemo.tasks.options import concluded_values_of, option_contents

QuestionFor = Callable[[str, str], Question | None]  # (task, question id) -> the question
NO_GOLD_VALUE = (
    "Nothing to count: no question of this log has a gold with one numeric value (its options are "
    "sentences, or its answers are expressions), so a text cannot be checked for computing the "
    "gold here. Read its fooled texts by eye instead."
)
_EQUALS = re.compile(r"=\s*")


def gold_value(question: Question) -> Fraction | None:
    """The gold's one value: the gold option's content when it is one number, or the gold
    number; None when it has none."""
    options = dict(option_contents(question.text))
    gold = question.gold or ""
    letter = re.fullmatch(r"\(?([A-Z])\)?", gold.strip())
    if letter and options:
        content = options.get(letter.group(1))
        found = [v for v, _, _ in number_spans(content)] if content else []
        return found[0] if len(found) == 1 else None
    if options:
        return None
    return number_value(gold) if gold else None


def worked_values(text: str) -> set[Fraction]:
    """The results a text computes: the first number after each "=", each `\\boxed{}` number,
    and what its concluding sentences state."""
    values: set[Fraction] = set()
    for match in _EQUALS.finditer(text):
        found = number_spans(text[match.end() : match.end() + 40])
        if found and found[0][1] == 0:
            values.add(found[0][0])
    for _, _, contents in boxed_spans(text):
        found = number_spans(contents)
        if len(found) == 1:
            values.add(found[0][0])
    return values | concluded_values_of(text)


@dataclass(frozen=True)
class HijackRow:
    """Per condition and method: answers that gave the target, and those whose text computed the
    gold on the way (over the answers whose question has a gold value)."""

    task: str
    label: str
    strength: str
    method: str
    answers: int  # with a gold value
    fooled: int  # stated the target
    hijacked: int  # stated the target, and the text computes the gold's value

    @property
    def share(self) -> float:
        return self.hijacked / self.fooled if self.fooled else float("nan")


def _text(record: dict[str, Any]) -> str:
    return "".join(chunk["text"] for chunk in record.get("chunks", []))


def hijacked(log: RunLog, question_for: QuestionFor) -> tuple[list[HijackRow], list[dict]]:
    """The rows per condition and method, and every hijacked answer (condition, question,
    method, trajectory, gold value, target, text) in log order."""
    finished = {(r["condition"], r["question_id"]) for r in log.finished_units()}
    counts: dict[tuple[str, str], list[int]] = {}
    found: list[dict] = []
    for _, record in log.records:
        if record["type"] != "trajectory":
            continue
        key = (record["condition"], record["question_id"])
        if key not in finished:
            continue
        cond = log.conditions[record["condition"]]
        question = question_for(cond["task"], record["question_id"])
        value = gold_value(question) if question is not None else None
        if value is None:
            continue
        tally = counts.setdefault((record["condition"], record["method"]), [0, 0, 0])
        tally[0] += 1
        if not record.get("fooled"):
            continue
        tally[1] += 1
        text = _text(record)
        if value in worked_values(text):
            tally[2] += 1
            found.append({
                "condition": record["condition"], "label": cond["label"],
                "question_id": record["question_id"], "method": record["method"],
                "trajectory": record["trajectory"], "gold": record.get("gold"),
                "gold_value": str(value), "target": record.get("target"), "text": text,
            })  # fmt: skip
    rows = []
    for (key, method), (answers, fooled, hits) in counts.items():
        cond = log.conditions[key]
        rows.append(
            HijackRow(cond["task"], cond["label"], cond["strength"], method, answers, fooled, hits)
        )
    return rows, found


def hijacked_tables(log: RunLog, question_for: QuestionFor, examples: int = 3) -> tuple[str, str]:
    """(hijacked.md with `examples` RRMaj trajectories quoted, hijacked.csv)."""
    rows, found = hijacked(log, question_for)
    if not rows:
        return NO_GOLD_VALUE + "\n", csv_text(rows)
    md = markdown_table(
        ["task", "config", "strength", "method", "answers", "fooled", "fooled, gold computed",
         "share of fooled"],
        [
            [r.task, r.label, r.strength, r.method, r.answers, r.fooled, r.hijacked,
             pct(r.share) if r.fooled else "–"]
            for r in rows
        ],
    )  # fmt: skip
    quoted = [f for f in found if f["method"] == "RRMaj" and _c(log, f["condition"]) > 0][:examples]
    for f in quoted:
        body = " ".join(f["text"].split())
        md += (
            f"\n\n**{f['question_id']}, {f['label']}, RRMaj trajectory {f['trajectory']}** (gold "
            f"{f['gold']} = {f['gold_value']}, target {f['target']}):\n\n> {body}"
        )
    return md + "\n", csv_text(rows)


def _c(log: RunLog, condition: str) -> int:
    return int(log.conditions[condition].get("c", 0))
