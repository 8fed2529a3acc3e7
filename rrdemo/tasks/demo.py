"""The `demo` task: 40 very easy questions written for this project (not from any benchmark).

Twenty three-option multiple-choice questions and twenty one-step arithmetic questions, so that
the small offline models can answer them and a corruption has a correct answer to pull away from.
The file is `rrdemo/tasks/demo_data/demo.jsonl`: one `{question, options?, answer}` per line.
Questions with options behave like a letter task ("(B)"), the others like a number task ("5"),
through the `custom` task's per-question dispatch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rrdemo.tasks.base import AnswerKind, Question
from rrdemo.tasks.custom import CustomTask

DEMO_FILE = Path(__file__).parent / "demo_data" / "demo.jsonl"


@dataclass(frozen=True)
class DemoTask(CustomTask):
    """Letter or number per question, like `custom`, under its own name."""

    name: str = "demo"
    title: str = "Demo"
    kind: AnswerKind = "number"
    infer: bool = True


def demo_question(index: int, row: dict) -> Question:
    """One data row -> Question "demo-NNNN"; options are listed "(A) ..." under the question."""
    labels = tuple(f"({chr(ord('A') + i)})" for i in range(len(row.get("options", []))))
    text = row["question"].strip()
    if labels:
        lines = "\n".join(
            f"{label} {body}" for label, body in zip(labels, row["options"], strict=True)
        )
        text = f"{text}\nOptions:\n{lines}"
    kind = "letter" if labels else "number"
    meta = {"index": index, "kind": kind, "source": "written for rrdemo"}
    return Question("demo", f"demo-{index:04d}", text, row["answer"], labels, meta)


@lru_cache(maxsize=1)
def demo_questions() -> tuple[Question, ...]:
    """All 40 demo questions, in file order."""
    with DEMO_FILE.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return tuple(demo_question(index, row) for index, row in enumerate(rows))
