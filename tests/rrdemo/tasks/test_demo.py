"""The `demo` task: our own 40 easy questions, loadable like a benchmark, scored and corrupted."""

from __future__ import annotations

import json

import pytest

from rrdemo.errors import RRError
from rrdemo.tasks import DEMO_TASK, Task, canonical_name, get_task, load_questions
from rrdemo.tasks.benchmarks import FINAL_FORMAT
from rrdemo.tasks.demo import DEMO_FILE

QUESTIONS = load_questions(DEMO_TASK)


def test_forty_questions_half_multiple_choice_half_arithmetic_with_gold_answers():
    n = len(DEMO_FILE.read_text().splitlines())
    assert len(QUESTIONS) == n
    letters = [q for q in QUESTIONS if q.options]
    numbers = [q for q in QUESTIONS if not q.options]
    assert len(letters) == len(numbers) == n // 2
    assert all(q.gold in q.options for q in letters)
    assert all(q.gold.lstrip("-").isdigit() for q in numbers)
    assert [q.qid for q in QUESTIONS] == [f"demo-{i:04d}" for i in range(n)]
    assert len({q.text for q in QUESTIONS}) == n


def test_gold_answers_are_right_for_the_arithmetic_questions():
    """The one-step sums are checked by computing them, not by trusting the file."""
    words = {"+": "+", "-": "-", "times": "*", "divided by": "//"}
    for row in map(json.loads, DEMO_FILE.read_text().splitlines()):
        text = row["question"]
        if "options" in row or not text.startswith("What is "):
            continue
        expression = text.removeprefix("What is ").rstrip("?")
        for word, symbol in words.items():
            expression = expression.replace(f" {word} ", f" {symbol} ")
        assert str(eval(expression, {"__builtins__": {}})) == row["answer"], text


def test_loadable_by_name_sampled_like_a_benchmark_and_a_task():
    assert canonical_name("Demo") == DEMO_TASK
    task = get_task("demo")
    assert isinstance(task, Task) and task.name == "demo"
    sample = load_questions("demo", n=8, seed=3)
    assert len(sample) == 8 and sample == load_questions("demo", n=8, seed=3)
    assert sample != load_questions("demo", n=8, seed=4)
    with pytest.raises(RRError, match="demo: asked for 41 questions but this set has only 40"):
        load_questions("demo", n=41)


@pytest.mark.parametrize("question", QUESTIONS, ids=[q.qid for q in QUESTIONS])
def test_prompt_extraction_scoring_and_distractor_work_per_question(question):
    task = get_task("demo")
    prompt = task.prompt(question)
    assert question.text in prompt
    assert (FINAL_FORMAT["letter"] in prompt) == bool(question.options)
    written = task.format_target(question.gold)
    answer = task.extract(f"Let me see. The answer is {written}.")
    assert task.is_correct(answer, question.gold)
    target = task.distractor(question, seed=0)
    assert not task.is_correct(target, question.gold)
    if question.options:
        assert target in question.options
    assert task.vote_key(task.extract(f"The answer is {task.format_target(target)}.")) == (
        task.vote_key(target)
    )
