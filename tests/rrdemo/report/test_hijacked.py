"""Right work, wrong label (rrdemo.report.hijacked): what a text computes, the gold's value, and the
count on a shipped evidence log."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from rrdemo.report.hijacked import gold_value, hijacked, hijacked_tables, worked_values
from rrdemo.runs.log import read_log
from rrdemo.runs.reextract import questions_by_id
from rrdemo.tasks.base import Question

ROOT = Path(__file__).resolve().parents[3]
ARITH = "Start with 6. Add 2. Add 16.\nOptions:\n(A) 24\n(B) 8\n(C) 25\n(D) 23\n(E) 22"


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("6 + 2 = 8 and 8 + 16 = 24. The answer is (D).", {8, 24}),
        ("So we get \\boxed{24}.", {24}),
        ("Therefore, the number you end with is 24.", {24}),
        ("Add 16 to get a larger number. The answer is (D).", set()),  # nothing computed
        ("Therefore, the result is not 24.", set()),  # a negated conclusion states nothing
        ("x = \\frac{3000}{100} = 30", {30}),  # the first number after the last '='
    ],
)
def test_worked_values_are_the_results_a_text_computes(text: str, values: set) -> None:
    assert worked_values(text) >= {Fraction(v) for v in values}
    if not values:
        assert worked_values(text) == set()


def test_the_gold_value_is_the_gold_options_number_or_the_gold_number() -> None:
    assert gold_value(Question("arith2", "q", ARITH, gold="(A)")) == 24
    assert gold_value(Question("gsm8k", "q", "How many?", gold="1,200")) == 1200
    logic = "Who is first?\nOptions:\n(A) The bus\n(B) The car"
    assert gold_value(Question("logic3", "q", logic, gold="(A)")) is None


def test_on_the_shipped_arith2_log_every_hijacked_answer_is_fooled_and_computes_the_gold() -> None:
    log = read_log(ROOT / "assets" / "evidence" / "log.jsonl")
    rows, found = hijacked(log, lambda task, qid: questions_by_id(task, "auto").get(qid))
    assert found and all(r.hijacked <= r.fooled <= r.answers for r in rows)
    for f in found:
        assert f["target"] != f["gold"]
        assert Fraction(f["gold_value"]) in worked_values(f["text"])
    # nobody is injected at 0c5t: nothing is fooled there
    assert all(r.fooled == 0 for r in rows if r.label == "0c5t")
    md, csv = hijacked_tables(log, lambda task, qid: questions_by_id(task, "auto").get(qid))
    assert md.count("RRMaj trajectory") == 3 and csv.splitlines()[0].startswith("task,label")


def test_a_log_whose_golds_are_sentences_says_why_nothing_is_counted() -> None:
    """Logic3's options are sentences: no gold has a number, so the table would be empty; the
    report says why instead of showing a header alone."""
    log = read_log(ROOT / "assets" / "evidence_logic3_steps" / "log.jsonl")
    question_for = lambda task, qid: questions_by_id(task, "auto").get(qid)  # noqa: E731
    rows, found = hijacked(log, question_for)
    assert rows == [] and found == []
    md, _ = hijacked_tables(log, question_for)
    assert md.startswith("Nothing to count") and "|" not in md
