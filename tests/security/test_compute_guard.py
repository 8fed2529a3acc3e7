"""The cheap checks before sympy: what they refuse (power towers, huge literals, factorials,
Python powers in a model's text), what they leave to the worker, what they read right here."""

from __future__ import annotations

import pytest

from rrdemo.tasks.mathguard import classify

REFUSED = {
    "9^{9^{8}}": "exponent that may reach 43,046,721",
    "9^{9^{9}}": "exponent that may reach 387,420,489",
    "2^{2^{2^{2^{2}}}}": "may evaluate to a number of 19,72",
    "(3)^{10^{6}}": "exponent that may reach 1,000,000",
    "x^{10^{7}}": "exponent that may reach 10,000,000",
    "7^{50000}": "may evaluate to a number of 42,255 digits",
    "100000!": "may evaluate to a number of",
    "1" * 1001: "a number of 1,001 digits",
}


@pytest.mark.parametrize("text", REFUSED)
def test_what_sympy_must_not_read_is_refused_with_its_reason(text: str) -> None:
    reason, plain = classify(text, answer=True)
    assert reason is not None and REFUSED[text] in reason and not plain


def test_a_tower_anywhere_in_a_model_text_is_refused() -> None:
    text = "First we note $x = 3$. Then\n\n**Step 2:** compute 9**(9**8) and box it."
    assert "exponent that may reach 43,046,721" in classify(text, answer=False)[0]
    assert classify("So the value is \\left(2\\right)^{10^{9}}.", answer=False)[0]


@pytest.mark.parametrize(
    "answer", ["\\frac{14}{3}", "x^2+7x+10", "(3,\\frac{\\pi}{2})", "2^{10}", "\\sqrt{2}", "6+9i"]
)
def test_ordinary_answers_are_read_right_here(answer: str) -> None:
    assert classify(answer, answer=True) == (None, True)


@pytest.mark.parametrize("answer", ["2^{10000}", "\\sum_{i=1}^{10} i", "1000!", "\\int_0^1 x dx"])
def test_heavier_answers_go_to_the_worker(answer: str) -> None:
    assert classify(answer, answer=True) == (None, False)


def test_markdown_bold_and_prose_exclamations_stay_plain() -> None:
    text = "1. **Add:** 3 + 4 = 7. Great!\n\n**Case 2:** the answer is $\\boxed{7}$."
    assert classify(text, answer=False) == (None, True)
