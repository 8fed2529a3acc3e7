"""Distractors (the corrupted agents' target): never gold, deterministic, varying with the seed."""

from __future__ import annotations

from collections import Counter

import pytest

from rrdemo.errors import RRError
from rrdemo.tasks import TASK_NAMES, Question, get_task, load_questions
from rrdemo.tasks.mathanswers import equivalent

SEEDS = (0, 1, 2)


@pytest.mark.parametrize("name", TASK_NAMES)
def test_distractor_is_never_gold(name: str) -> None:
    task = get_task(name)
    for question in load_questions(name, n=60, seed=7):
        for seed in SEEDS:
            target = task.distractor(question, seed)
            assert target != question.gold
            assert not task.is_correct(target, question.gold), (question.qid, target)
            if task.kind == "letter":
                assert target in question.options


@pytest.mark.parametrize("name", TASK_NAMES)
def test_distractor_is_deterministic_and_varies_with_seed(name: str) -> None:
    task = get_task(name)
    questions = load_questions(name, n=40, seed=3)
    first = [task.distractor(q, 0) for q in questions]
    assert first == [task.distractor(q, 0) for q in questions]
    other = [task.distractor(q, 5) for q in questions]
    assert first != other


def test_letter_distractor_is_roughly_uniform_over_wrong_options() -> None:
    task = get_task("logic7")
    question = load_questions("logic7", n=1, seed=0)[0]
    counts = Counter(task.distractor(question, seed) for seed in range(1200))
    assert set(counts) == set(question.options) - {question.gold}
    assert min(counts.values()) > 1200 / 6 * 0.7  # 6 wrong options, 200 expected each


def test_all_math500_distractors_are_not_equivalent() -> None:
    """Every MATH-500 question gets a wrong expression that math-verify reads as different."""
    task = get_task("math500")
    for question in load_questions("math500"):
        target = task.distractor(question, 0)
        assert not equivalent(question.gold, target), (question.qid, question.gold, target)
        assert not equivalent(target, question.gold), (question.qid, question.gold, target)


def test_gsm8k_distractors_are_plausible_numbers() -> None:
    task = get_task("gsm8k")
    for question in load_questions("gsm8k", n=200, seed=11):
        target = task.distractor(question, 0)
        value, gold = float(target), float(question.gold)
        assert value != gold
        assert value >= 0 or gold < 0
        assert abs(value) <= 10 * abs(gold) + 10  # near the gold, not an arbitrary number
        assert float(target).is_integer() or not float(question.gold).is_integer()


def test_distractor_needs_a_gold_for_numbers() -> None:
    question = Question(task="gsm8k", qid="x-1", text="How many?", gold=None)
    with pytest.raises(RRError, match="no numeric gold"):
        get_task("gsm8k").distractor(question, 0)
