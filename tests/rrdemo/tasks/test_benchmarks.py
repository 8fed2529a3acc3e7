"""The three kinds of benchmark task: one prompt family, each task's answers read, compared,
voted on and written into an injection the same way."""

from __future__ import annotations

import pytest

from rrdemo.config import PROMPT_STYLES as PROMPT_STYLES_OF_CONFIG
from rrdemo.tasks import TASK_NAMES, get_task
from rrdemo.tasks.answers import copyable_placeholders
from rrdemo.tasks.base import Question
from rrdemo.tasks.benchmarks import (
    COT_CUE,
    FINAL_FORMAT,
    PROMPT_STYLES,
    WORK_CUE,
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


def test_prompts_state_the_final_answer_format_in_words() -> None:
    from rrdemo.tasks import Question

    question = Question(task="x", qid="x-0", text="What is 2+2?")
    assert get_task("gsm8k").prompt(question).endswith(FINAL_FORMAT["number"])
    assert FINAL_FORMAT["letter"] in get_task("aqua").prompt(question)
    assert "\\boxed{}" in get_task("math500").prompt(question)
    for name in ("gsm8k", "aqua", "math500"):
        assert (
            get_task(name).prompt(question).startswith("What is 2+2?\n\nLet's think step by step.")
        )


def test_the_prompt_is_the_question_the_cue_and_the_answer_format_of_its_kind() -> None:
    for kind, format_line in FINAL_FORMAT.items():
        expected = f"What is 2+2?\n\n{COT_CUE} {WORK_CUE} {format_line}"
        assert build_prompt("  What is 2+2?\n", kind) == expected
    assert styled_prompt("P") == "P"
    assert styled_prompt("P", "step-by-step") == f"P {PROMPT_STYLES['step-by-step'].cue}"
    assert set(PROMPT_STYLES) == set(PROMPT_STYLES_OF_CONFIG)
    assert all(style.purpose for style in PROMPT_STYLES.values())


@pytest.mark.parametrize("name", TASK_NAMES)
def test_a_benchmark_reads_every_question_the_same_way_but_for_its_options(name: str) -> None:
    task = get_task(name)
    assert task.for_question(Question(name, f"{name}-0", "Q?")) == task
    listed = task.for_question(Question(name, f"{name}-0", "Q?\nOptions:\n(A) 3\n(B) 4"))
    if task.kind == "letter":  # an answer naming an option's value is read (tasks/options.py)
        assert listed.contents == (("A", "3"), ("B", "4"))
        assert listed.extract("It is 4.", "eos") == "(B)"
    else:
        assert listed is task


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


def _sent_prompts(task_name: str, style: str, strength: str, adversary: str) -> list[str]:
    """Every prompt MAJ and RRMaj send on a task's first question (3c2t), as the agents read it,
    with the question's own text taken out (a benchmark question may hold "..." itself)."""
    from rrdemo.config import RunConfig, Sampling
    from rrdemo.protocols import run_question
    from rrdemo.seats import homogeneous_agents
    from rrdemo.tasks import load_questions
    from tests.support.fakes import FakeBackend, FakePool

    task = get_task(task_name)
    question = load_questions(task_name, 1, seed=0)[0]
    backend = FakeBackend("fake", lambda prompt: "I think so")
    config = RunConfig(
        agents=homogeneous_agents("fake", 5, 3),
        strength=strength,
        custom_template="Go with {target} please." if strength == "custom" else None,
        k=2,
        max_tokens=4,
        sampling=Sampling(temperature=0, seed=0),
        prompt_style=style,
        adversary=adversary,
    )
    list(run_question(config, question, task, FakePool(backend)))
    return [
        r.prompt.replace(question.text.strip(), "").replace("<user>", "").replace("</user>", "")
        for call in backend.calls
        for r in call
    ]


@pytest.mark.parametrize("task_name", [*TASK_NAMES, "demo"])
@pytest.mark.parametrize("style", list(PROMPT_STYLES))
def test_no_prompt_holds_a_placeholder_a_model_could_copy(task_name: str, style: str) -> None:
    """System, user text, style cue, injection and adversary text, for every task and style: none
    of them shows where the answer goes ("The answer is N.", "(X)", "\\\\boxed{ANSWER}", "...")."""
    from rrdemo.config import ADVERSARIES, STRENGTHS

    for strength in STRENGTHS:
        for adversary in ADVERSARIES:
            for prompt in _sent_prompts(task_name, style, strength, adversary):
                assert copyable_placeholders(prompt) == [], (strength, adversary, prompt)


def test_the_placeholder_check_finds_the_old_formats() -> None:
    """The check can fail: the formats the prompts used to show are each caught."""
    old = [
        'End your response with "The answer is N." where N is the final number.',
        'End your response with "The answer is (X)." where X is the letter of the correct option.',
        'End your response with "The answer is $\\\\boxed{ANSWER}$." where ANSWER is the answer.',
        "Answer: ...",
        "Write the answer as <number>.",
    ]
    assert all(copyable_placeholders(text) for text in old)
    assert copyable_placeholders("What is 2 + 3? The answer is 5.") == []


@pytest.mark.parametrize("kind", ["letter", "number", "math"])
def test_custom_questions_of_every_kind_hold_no_placeholder(kind: str) -> None:
    task = get_task("custom", kind)
    question = task.question("Which is prime? (A) 4 (B) 7 (C) 9" if kind == "letter" else "2+3?")
    for style in PROMPT_STYLES:
        prompt = styled_prompt(task.prompt(question), style).replace(question.text, "")
        assert copyable_placeholders(prompt) == []
