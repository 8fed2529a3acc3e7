"""Generated arithmetic (beyond the paper): seeded, exact, five distinct options, named as generated."""

from __future__ import annotations

import re

import pytest

from rrdemo.errors import RRError
from rrdemo.tasks import canonical_name, get_task, load_questions
from rrdemo.tasks.generated import MAX_STEPS, POOL_SIZE, arith_question, generated_questions


def _solve(text: str) -> int:
    """The result, recomputed from the question's own words (independently of the generator)."""
    value = int(re.search(r"Start with (\d+)\.", text).group(1))
    for verb, number in re.findall(r"(Add|Subtract|Multiply by) (\d+)\.", text):
        n = int(number)
        value = value + n if verb == "Add" else value - n if verb == "Subtract" else value * n
    return value


@pytest.mark.parametrize("steps", [1, 2, 4, 7, MAX_STEPS])
def test_every_question_has_exactly_one_right_option_and_it_is_the_gold(steps: int) -> None:
    for question in generated_questions(f"arith{steps}")[:200]:
        options = dict(re.findall(r"^\((\w)\) (-?\d+)$", question.text, re.MULTILINE))
        assert len(options) == 5 and len(set(options.values())) == 5
        right = [
            f"({letter})"
            for letter, value in options.items()
            if int(value) == _solve(question.text)
        ]
        assert right == [question.gold]
        assert len(re.findall(r"(Add|Subtract|Multiply by) \d+\.", question.text)) == steps
        assert question.meta["result"] == _solve(question.text) > 0


def test_the_same_seed_gives_the_same_questions_on_every_call() -> None:
    first = load_questions("arith3", 20, seed=7)
    generated_questions.cache_clear()
    assert load_questions("arith3", 20, seed=7) == first
    assert load_questions("arith3", 20, seed=8) != first
    assert arith_question(3, 42) == arith_question(3, 42)
    assert arith_question(3, 42).qid == "arith3-0042"


def test_the_pool_has_distinct_texts() -> None:
    for steps in (1, 3):
        pool = generated_questions(f"arith{steps}")
        assert len(pool) == POOL_SIZE == len({q.text for q in pool})


def test_the_name_says_generated_and_bad_knobs_are_refused() -> None:
    task = get_task("Arith-3")
    assert task.name == "arith3" and "generated, beyond the paper" in task.title
    assert task.extract("10 - 2 = 8. The answer is (C).") == "(C)"
    for bad in ("arith0", f"arith{MAX_STEPS + 1}", "arith"):
        with pytest.raises(RRError, match="generated arith1..arith12"):
            canonical_name(bad)
    with pytest.raises(RRError, match="only 'custom' takes a kind"):
        get_task("arith3", "number")
    with pytest.raises(RRError, match="asked for 1001 questions"):
        load_questions("arith2", POOL_SIZE + 1)
