"""MATH-500 answers: the final LaTeX answer read out of a model's text, its normal form, and
math-verify's equivalence (also off the main thread, where Gradio runs callbacks)."""

from __future__ import annotations

import pytest

from rrdemo.tasks.mathanswers import equivalent, extract_math, math_vote_key, normalize_latex

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
    assert extract_math(text) == expected


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
    assert equivalent(gold, answer) is same


def test_math_vote_keys_group_equivalent_answers() -> None:
    key = math_vote_key
    assert key("1/2") == key("\\frac{1}{2}") == key("0.5")
    assert key("\\frac{1}{2}") != key("\\frac{1}{3}")
    # written forms of one answer share a key
    assert key("\\text{Evelyn}") == key("$\\text{Evelyn}$")


def test_latex_normal_form_keeps_command_spacing() -> None:
    assert normalize_latex("$\\boxed{ \\pi r ^ 2 }$") == "\\pi r^2"
    assert normalize_latex("\\( x + 1 \\).") == "x+1"

    assert normalize_latex(None) is None


def test_nothing_is_equivalent_to_a_missing_answer_or_gold() -> None:
    assert not equivalent("1", None) and not equivalent(None, "1")


def test_a_text_cut_off_at_l_needs_its_final_statement() -> None:
    text = "So far the ratio is $\\frac{1}{2}$ and"
    assert extract_math(text) == "\\frac{1}{2}"  # read as complete: the flexible reading
    assert extract_math(text, finish_reason="length") is None
    stated = "Thus $\\boxed{\\frac{1}{2}}$ and now"
    assert extract_math(stated, finish_reason="length") == "\\frac{1}{2}"


def test_math_works_outside_the_main_thread() -> None:
    """Gradio runs callbacks in worker threads, where math-verify's signal timeout cannot work."""
    import threading

    results: list[object] = []

    def work() -> None:
        try:
            results.append(
                (
                    extract_math("Thus $\\boxed{\\frac{6}{8}}$."),
                    equivalent("\\frac{3}{4}", "0.75"),
                    math_vote_key("3/4") == math_vote_key("\\frac{3}{4}"),
                )
            )
        except Exception as exc:  # surfaced in the assertion below
            results.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(timeout=60)
    assert results == [("\\frac{6}{8}", True, True)]
