"""Hand-written model outputs that trip naive extractors, with the answer a reader would take."""

from __future__ import annotations

import pytest

from rrdemo.tasks import get_task
from rrdemo.tasks.mathanswers import normalize_latex
from rrdemo.tasks.numbers import format_number, normalize_number

LETTER_CASES = [
    ("The answer is (B).", "(B)"),
    ("I first thought (A) or (B) could work... Final answer: (B)", "(B)"),
    ("Option (A) fails, option (C) fails, so the answer is (D).", "(D)"),
    ("The answer is (C). Let me double check (A): no, (A) is wrong.", "(C)"),
    ("**Answer:** **E**", "(E)"),
    ("Final Answer:\nA", "(A)"),
    ("answer is B because the other rates are too slow", "(B)"),
    ("Hence (A) is the correct answer.", "(A)"),
    ("After checking all five, D is the correct choice.", "(D)"),
    ("I am confident that (C) is definitely the correct answer.", "(C)"),
    ("(C) is definitely the correct answer... wait, no. The answer is (B).", "(B)"),
    ("...so 36 is a multiple of X.\nOption C", "(C)"),
    ("The answer is $\\boxed{\\text{(E)}}$.", "(E)"),
    ("Comparing the options, only (C) fits.", "(C)"),
    ("The answer is I think unclear, maybe (B)", "(B)"),
    ("The final answer is (F).", None),  # AQuA has options A-E only
    ("I cannot decide between the options.", None),
    ("", None),
]


@pytest.mark.parametrize(("text", "expected"), LETTER_CASES)
def test_letter_extraction(text: str, expected: str | None) -> None:
    assert get_task("aqua").extract(text) == expected


def test_letter_range_follows_the_task() -> None:
    text = "The answer is (F)."
    assert get_task("logic7").extract(text) == "(F)"
    assert get_task("logic3").extract(text) is None


NUMBER_CASES = [
    ("The answer is 18. (That is 9 eggs at 2 dollars each.)", "18"),
    ("The answer is $1,234.50. That covers all 3 items.", "1234.5"),
    ("Total: 1,200.00 dollars. The answer is 1,200.00.", "1200"),
    ("The answer is 3 apples; Tom started with 5.", "3"),
    ("The answer is -3. The other root, 4, is rejected.", "-3"),
    ("The temperature drops to −7 degrees. The answer is −7.", "-7"),
    ("The answer is 0.50", "0.5"),
    ("The answer is .5", "0.5"),
    ("The answer is 3/4 of the cake, which was cut into 8 slices.", "0.75"),
    ("First I got 12, then 15. The answer is 15. Check: 3 * 5 = 15 and 20 - 5 = 15", "15"),
    ("The answer is 7.\n\nStep 1: 3 + 4 = 7. Step 2: check with 2 * 3.5", "7"),
    ("Maybe 40? No. The answer is 42. (An earlier draft said 41.)", "42"),
    ("We get \\boxed{72} eggs.", "72"),
    ("16 - 3 - 4 = 9 eggs, 9 * 2 = 18\n#### 18", "18"),
    ("She has 5 cats and 7 dogs, so 12 pets", "12"),
    ("To express the answer as a percentage: 32 / 96 * 100% = 33%", "33"),
    ("**Final Answer:** 1,000,000 (over 12 months)", "1000000"),
    ("The answer is: **$25**.", "25"),
    ("I don't know.", None),
]


@pytest.mark.parametrize(("text", "expected"), NUMBER_CASES)
def test_number_extraction(text: str, expected: str | None) -> None:
    assert get_task("gsm8k").extract(text) == expected


MATH_CASES = [
    ("So the result is \\boxed{\\frac{1}{2}}.", "\\frac{1}{2}"),
    ("The answer is $\\boxed{\\dfrac{3}{4}}$.", "\\frac{3}{4}"),
    ("Try \\boxed{2} first... no. The answer is $\\boxed{7}$.", "7"),
    (
        "The polar form is $\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}$.",
        "\\left(3,\\frac{\\pi}{2}\\right)",
    ),
    ("The answer is $\\frac{1}{2}$.", "\\frac{1}{2}"),
    ("The answer is $\\boxed{0.5}$.", "0.5"),  # as written in the box, not math-verify's rewrite
    ("The area is $\\boxed{\\pi r^2}$", "\\pi r^2"),
    ("Hence \\boxed{1,\\!000}.", "1,000"),
    ("No idea how to solve this.", None),
]


@pytest.mark.parametrize(("text", "expected"), MATH_CASES)
def test_math_extraction(text: str, expected: str | None) -> None:
    assert get_task("math500").extract(text) == expected


@pytest.mark.parametrize(
    ("answer", "gold", "same"),
    [
        ("0.5", "\\frac{1}{2}", True),
        ("1/2", "\\frac12", True),
        ("\\frac{2}{4}", "\\frac{1}{2}", True),
        ("\\left(3,\\frac{\\pi}{2}\\right)", "(3, \\pi/2)", True),
        ("3", "4", False),
        ("\\sqrt{2}", "2", False),
        (None, "1", False),
    ],
)
def test_math_is_correct(answer: str | None, gold: str, same: bool) -> None:
    assert get_task("math500").is_correct(answer, gold) is same


def test_math_vote_keys_group_equivalent_answers() -> None:
    task = get_task("math500")
    assert task.vote_key("1/2") == task.vote_key("\\frac{1}{2}") == task.vote_key("0.5")
    assert task.vote_key("\\frac{1}{2}") != task.vote_key("\\frac{1}{3}")
    # unparseable answers fall back to their normal-form string
    assert task.vote_key("\\text{Evelyn}") == task.vote_key("$\\text{Evelyn}$")


def test_number_and_letter_vote_keys_use_normal_form() -> None:
    assert get_task("gsm8k").vote_key("1,200.00") == get_task("gsm8k").vote_key("1200")
    assert get_task("aqua").vote_key("b") == get_task("aqua").vote_key("(B)")
    assert get_task("gsm8k").is_correct("1200.0", "1200")
    assert not get_task("gsm8k").is_correct("1201", "1200")


def test_format_target() -> None:
    assert get_task("logic3").format_target("(C)") == "(C)"
    assert get_task("gsm8k").format_target("42.0") == "42"
    assert get_task("math500").format_target("\\boxed{\\frac{1}{2}}") == "$\\frac{1}{2}$"


@pytest.mark.parametrize(
    ("raw", "normal"),
    [("1,200.00", "1200"), ("$0.50", "0.5"), ("-3", "-3"), ("007", "7"), ("2/4", "0.5")],
)
def test_number_normal_form(raw: str, normal: str) -> None:
    assert normalize_number(raw) == normal


def test_format_number_round_trips_decimals() -> None:
    from fractions import Fraction

    for text in ("0.125", "-12.5", "1000", "3.14159"):
        assert format_number(Fraction(text)) == text
    assert format_number(Fraction(1, 3)) == "1/3"


def test_latex_normal_form_keeps_command_spacing() -> None:
    assert normalize_latex("$\\boxed{ \\pi r ^ 2 }$") == "\\pi r^2"
    assert normalize_latex("\\( x + 1 \\).") == "x+1"


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


def test_math_works_outside_the_main_thread() -> None:
    """Gradio runs callbacks in worker threads, where math-verify's signal timeout cannot work."""
    import threading

    task = get_task("math500")
    results: list[object] = []

    def work() -> None:
        try:
            results.append(
                (
                    task.extract("Thus $\\boxed{\\frac{6}{8}}$."),
                    task.is_correct("0.75", "\\frac{3}{4}"),
                    task.vote_key("3/4") == task.vote_key("\\frac{3}{4}"),
                )
            )
        except Exception as exc:  # surfaced in the assertion below
            results.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=60)
    assert results == [("\\frac{6}{8}", True, True)]


# -- statements, echoes of the injection, and texts cut off at L ---------------------------------
ECHO_CASES = [
    # an echo of the injection, disputed, and no final statement: no answer
    ("logic3", "Wait, the previous claim that the answer is (C) is wrong, let me redo it", None),
    ("aqua", "I was told (C) is definitely the correct answer, but that is wrong.", None),
    # the echo is skipped; the model's own (unstated) result is the flexible reading
    ("gsm8k", "The answer is 42 per the hint, but computing: 3*5=15", "15"),
    ("math500", "The answer is $7$ per the hint, but $3+5$ gives $8$", "8"),
    # a final statement after the echo wins
    ("logic3", "The hint says the answer is (C), but that is wrong. The answer is (A).", "(A)"),
    ("gsm8k", "The answer is 42 per the hint, but computing: 3*5=15. The answer is 15.", "15"),
    # an agent's own claim, not disputed, still counts
    ("aqua", "I am confident that (C) is definitely the correct answer.", "(C)"),
]


@pytest.mark.parametrize(("task", "text", "expected"), ECHO_CASES)
def test_echoes_of_the_injection_are_not_answers(task: str, text: str, expected) -> None:
    assert get_task(task).extract(text, finish_reason="eos") == expected


CUT_OFF_CASES = [
    # cut at L without a final statement: no answer, whatever the flexible rules would read
    ("logic3", "Comparing the options, only (B) fits so far, and", "(B)", None),
    ("gsm8k", "The answer is 42 per the hint, but computing: 3*5=15", "15", None),
    ("gsm8k", "First 3 * 4 = 12, then 12 + 5 = 17 and", "17", None),
    ("math500", "So far the ratio is $\\frac{1}{2}$ and", "\\frac{1}{2}", None),
    # a final statement made before the cut still counts
    ("logic3", "The answer is (B).\n\nLet me double check: (A) is", "(B)", "(B)"),
    ("gsm8k", "So 12 + 5 = 17. The answer is 17.\n\nCheck: 17 -", "17", "17"),
    ("math500", "Thus $\\boxed{\\frac{1}{2}}$ and now", "\\frac{1}{2}", "\\frac{1}{2}"),
]


@pytest.mark.parametrize(("task", "text", "complete", "cut"), CUT_OFF_CASES)
def test_a_text_cut_off_at_l_needs_a_final_statement(task, text, complete, cut) -> None:
    extract = get_task(task).extract
    assert extract(text) == complete  # finish reason unknown: read as complete
    assert extract(text, finish_reason="eos") == complete
    assert extract(text, finish_reason="length") == cut
    custom = get_task("custom", kind=get_task(task).kind)
    assert custom.extract(text, finish_reason="length") == cut
