"""The `custom` task: kind inferred from the typed question, or fixed."""

from __future__ import annotations

import pytest

from rrdemo.errors import RRError
from rrdemo.tasks import get_task
from rrdemo.tasks.benchmarks import FINAL_FORMAT
from rrdemo.tasks.custom import detect_options

MULTIPLE_CHOICE = "Which is a prime?\n(A) 4\n(B) 6\n(C) 7\n(D) 9"


@pytest.mark.parametrize(
    ("text", "options"),
    [
        (MULTIPLE_CHOICE, ("(A)", "(B)", "(C)", "(D)")),
        ("Pick one:\nA) red\nB) blue\nC) green", ("(A)", "(B)", "(C)")),
        ("Which? (A) 12 (B) 15 (C) 18", ("(A)", "(B)", "(C)")),
        ("Tom has 3 apples (a lot). How many after buying 2?", ()),
        ("Only (A) 5 is listed", ()),
    ],
)
def test_detect_options(text: str, options: tuple[str, ...]) -> None:
    assert detect_options(text) == options


def test_inferred_multiple_choice_question() -> None:
    task = get_task("custom")
    question = task.question(MULTIPLE_CHOICE, gold="c")
    assert question.gold == "(C)" and question.meta["kind"] == "letter"
    assert FINAL_FORMAT["letter"] in task.prompt(question)
    assert task.extract("7 is prime. The answer is (C).") == "(C)"
    assert task.is_correct("(C)", question.gold)
    assert task.distractor(question, 0) in {"(A)", "(B)", "(D)"}
    assert task.format_target("(B)") == "(B)"


def test_inferred_number_question() -> None:
    task = get_task("custom")
    question = task.question("A book costs $12 and a pen $3. What do both cost?", gold="$15.00")
    assert question.gold == "15" and question.meta["kind"] == "number"
    assert FINAL_FORMAT["number"] in task.prompt(question)
    assert task.extract("12 + 3 = 15. The answer is 15.") == "15"
    assert task.is_correct("15.0", question.gold)
    assert task.distractor(question, 0) != "15"
    assert task.vote_key("1,500") == task.vote_key("1500")


def test_explicit_math_kind() -> None:
    task = get_task("custom", kind="math")
    question = task.question("Simplify 2/4.", gold="\\frac{1}{2}")
    assert question.meta["kind"] == "math"
    assert task.extract("so $\\boxed{\\frac{2}{4}}$") == "\\frac{2}{4}"
    assert task.is_correct("0.5", question.gold)
    assert task.vote_key("1/2") == task.vote_key("\\frac{1}{2}")
    assert not task.is_correct(task.distractor(question, 0), question.gold)


def test_custom_errors() -> None:
    task = get_task("custom")
    with pytest.raises(RRError, match="empty"):
        task.question("   ")
    with pytest.raises(RRError, match=r"one of \(A\), \(B\), \(C\), \(D\)"):
        task.question(MULTIPLE_CHOICE, gold="(E)")
    with pytest.raises(RRError, match="a number"):
        task.question("How many legs has a spider?", gold="eight")
    with pytest.raises(RRError, match="two options"):
        get_task("custom", kind="letter").question("How many legs has a spider?")
    with pytest.raises(RRError, match="auto, letter, number, math"):
        get_task("custom", kind="essay")
    with pytest.raises(RRError, match="no numeric gold"):
        task.distractor(task.question("How many legs has a spider?"), 0)
