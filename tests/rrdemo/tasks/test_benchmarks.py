"""The three kinds of benchmark task: one prompt family, each task's answers read, compared,
voted on and written into an injection the same way."""

from __future__ import annotations

import pytest

from rrdemo.tasks import TASK_NAMES, get_task
from rrdemo.tasks.base import Question
from rrdemo.tasks.benchmarks import (
    COT_CUE,
    FINAL_FORMAT,
    REASONING_CUE,
    LetterTask,
    build_prompt,
    styled_prompt,
)


def test_letter_range_follows_the_task() -> None:
    text = "The answer is (F)."
    assert get_task("logic7").extract(text) == "(F)"
    assert get_task("logic3").extract(text) is None


def test_number_and_letter_vote_keys_use_normal_form() -> None:
    assert get_task("gsm8k").vote_key("1,200.00") == get_task("gsm8k").vote_key("1200")
    assert get_task("aqua").vote_key("b") == get_task("aqua").vote_key("(B)")
    assert get_task("gsm8k").is_correct("1200.0", "1200")
    assert not get_task("gsm8k").is_correct("1201", "1200")


def test_format_target() -> None:
    assert get_task("logic3").format_target("(C)") == "(C)"
    assert get_task("gsm8k").format_target("42.0") == "42"
    assert get_task("math500").format_target("\\boxed{\\frac{1}{2}}") == "$\\frac{1}{2}$"


def test_prompts_state_the_final_answer_format() -> None:
    from rrdemo.tasks import Question

    question = Question(task="x", qid="x-0", text="What is 2+2?")
    assert (
        get_task("gsm8k")
        .prompt(question)
        .endswith('"The answer is N." where N is the final number.')
    )
    assert '"The answer is (X)."' in get_task("aqua").prompt(question)
    assert "\\boxed{ANSWER}" in get_task("math500").prompt(question)
    for name in ("gsm8k", "aqua", "math500"):
        assert (
            get_task(name).prompt(question).startswith("What is 2+2?\n\nLet's think step by step.")
        )


def test_the_prompt_is_the_question_the_cue_and_the_answer_format_of_its_kind() -> None:
    for kind, format_line in FINAL_FORMAT.items():
        assert build_prompt("  What is 2+2?\n", kind) == f"What is 2+2?\n\n{COT_CUE} {format_line}"
    assert styled_prompt("P") == "P"
    assert styled_prompt("P", "step-by-step") == f"P {REASONING_CUE}"


@pytest.mark.parametrize("name", TASK_NAMES)
def test_a_benchmark_reads_every_question_itself(name: str) -> None:
    task = get_task(name)
    assert task.for_question(Question(name, f"{name}-0", "Q?")) is task


def test_a_letter_distractor_is_another_option_of_the_question() -> None:
    task = LetterTask("mc", "MC", letters="ABCDE")
    question = Question(
        "mc", "mc-1", "Q? (A) x (B) y (C) z", gold="(B)", options=("(A)", "(B)", "(C)")
    )
    targets = {task.distractor(question, seed) for seed in range(40)}
    assert targets == {"(A)", "(C)"}  # never the gold, never a letter the question lacks


def test_a_missing_answer_or_gold_is_never_correct() -> None:
    for name in ("aqua", "gsm8k", "math500"):
        task = get_task(name)
        assert not task.is_correct(None, "1") and not task.is_correct("1", None)
