"""Hand-written model outputs that trip naive extractors, with the answer a reader would take."""

from __future__ import annotations

import pytest

from rrdemo.tasks import get_task

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
    # a statement only the end of the text closes may have been cut inside (103.208271768)
    ("gsm8k", "So the price is $103.208271768.\nThe answer is 103.20827", "103.20827", None),
    ("aqua", "Checking each option again.\nThe answer is (C)", "(C)", None),
    ("math500", "Therefore the answer is $\\boxed{5}$", "5", None),
]


@pytest.mark.parametrize(("task", "text", "complete", "cut"), CUT_OFF_CASES)
def test_a_text_cut_off_at_l_needs_a_final_statement(task, text, complete, cut) -> None:
    extract = get_task(task).extract
    assert extract(text) == complete  # finish reason unknown: read as complete
    assert extract(text, finish_reason="eos") == complete
    assert extract(text, finish_reason="length") == cut
    custom = get_task("custom", kind=get_task(task).kind)
    assert custom.extract(text, finish_reason="length") == cut
