"""Where an answer is first stated (rrdemo.calibration.stated), on texts whose positions are known;
a character counter makes a token position a character offset."""

from __future__ import annotations

import pytest

from rrdemo.calibration.stated import first_stated, stated_at
from rrdemo.tasks import get_task, load_questions
from rrdemo.tasks.base import Question

AQUA = Question(
    "aqua", "aqua-0001", "How many?\nOptions:\n(A) 40\n(B) 200\n(C) 380\n(D) 400\n(E) 32"
)


def _reader(name: str = "aqua", question: Question = AQUA):
    return get_task(name).for_question(question)


def _record(text: str, answer: str | None, target: str, finish: str = "eos") -> dict:
    return {"text": text, "answer": answer, "target": target, "finish_reason": finish,
            "n_tokens": len(text)}  # fmt: skip


def test_an_immediate_answer_is_stated_at_its_first_sentence() -> None:
    text = "The answer is (E).\nLet me explain why that holds."
    found = stated_at(_reader(), _record(text, "(E)", "(E)"), len)
    assert found == {"first": len("The answer is (E)."), "answer": 18, "target": 18}


def test_working_first_states_the_answer_late_and_the_target_never() -> None:
    work = "Count the rows: 8 rows of 5 make 40. "
    text = work + "The answer is (A)."
    found = stated_at(_reader(), _record(text, "(A)", "(E)"), len)
    assert found == {"first": len(text), "answer": len(text), "target": None}


def test_a_target_stated_then_overturned_counts_where_it_was_first_stated() -> None:
    text = "The answer is (E). Wait, recount: 8 rows of 5 is 40. The answer is (A)."
    found = stated_at(_reader(), _record(text, "(A)", "(E)"), len)
    assert found["target"] == len("The answer is (E).")
    assert found["first"] == found["target"] and found["answer"] == len(text)


def test_an_open_statement_is_not_yet_stated() -> None:
    """A prefix is read as cut off: "The answer is (E" or a bare mention states nothing."""
    text = "Maybe (E) fits, maybe not, we will see soon enough"
    assert first_stated(_reader(), text, "length", {"first": None}) == {"first": None}
    text = "I am told (E) but 8 rows of 5 is 40\nThe answer is (A)."
    assert first_stated(_reader(), text, "eos", {"target": "(E)", "answer": "(A)"}) == {
        "target": None, "answer": len(text),
    }  # fmt: skip


@pytest.mark.parametrize(
    ("text", "position"),
    [
        ("There are 3 + 4 = 7 apples. The answer is 7.\nDone.", len("There are 3 + 4 = 7 apples. The answer is 7.")),
        ("Working: 3 + 4 = 7\n#### 7\nChecked.", len("Working: 3 + 4 = 7\n#### 7\n")),
        ("So we get $\\boxed{7}$.", len("So we get $\\boxed{7}$.")),
    ],
)  # fmt: skip
def test_numbers_are_stated_by_their_statements(text: str, position: int) -> None:
    question = Question("gsm8k", "gsm8k-0001", "3 + 4?", gold="7")
    reader = get_task("gsm8k").for_question(question)
    assert first_stated(reader, text, "eos", {"answer": "7"})["answer"] == position


def test_token_positions_use_the_counter_and_the_whole_text_uses_its_length() -> None:
    question = next(q for q in load_questions("arith2") if q.qid == "arith2-0006")
    text = "Start with 6. Add 2: 8. Add 16: 24. The answer is (A)."
    words = lambda s: len(s.split())  # noqa: E731 - a word counter stands in for a tokenizer
    record = {**_record(text, "(A)", "(D)"), "n_tokens": 99}
    assert stated_at(_reader("arith2", question), record, words) == {
        "first": 99, "answer": 99, "target": None,
    }  # fmt: skip
    record["text"] = "The answer is (D). Start with 6."
    record["answer"] = "(D)"
    assert stated_at(_reader("arith2", question), record, words)["target"] == 4
