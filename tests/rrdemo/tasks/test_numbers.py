"""Plain numbers in free text (GSM8K): the final number a model gave, writing forms and the normal form."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rrdemo.tasks.numbers import (
    extract_number,
    format_number,
    normalize_number,
    number_spans,
    number_value,
    numbers_in,
)

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
    assert extract_number(text) == expected


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


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("3 1/2", Fraction(7, 2)),  # a mixed number
        ("12:30", Fraction(25, 2)),  # a time: hours
        ("-3/4", Fraction(-3, 4)),
        ("−7", Fraction(-7)),  # a unicode minus
        ("$1,234.50", Fraction(246900, 200)),
        (".5", Fraction(1, 2)),
    ],
)
def test_writing_forms_have_their_exact_value(written: str, value: Fraction) -> None:
    assert number_value(written) == value
    assert normalize_number(written) == format_number(value)


def test_a_mixed_number_that_does_not_hold_is_read_as_two_numbers() -> None:
    assert numbers_in("3 5/4") == [Fraction(3), Fraction(5, 4)]  # 5/4 is not a proper fraction


def test_spans_point_at_the_numbers_in_the_text() -> None:
    text = "Tom has 12 apples and 3 1/2 pies."
    spans = number_spans(text)
    assert [value for value, _, _ in spans] == [Fraction(12), Fraction(7, 2)]
    assert [text[start:end] for _, start, end in spans] == ["12", "3 1/2"]


def test_step_labels_and_list_numbers_are_not_answers() -> None:
    assert extract_number("Add the two numbers 5 and 7. Step 2") == "7"
    assert extract_number("We need 12 eggs.\n6. Then count again") == "12"


def test_a_text_cut_off_at_l_needs_its_final_statement() -> None:
    text = "First 3 * 4 = 12, then 12 + 5 = 17 and"
    assert extract_number(text) == "17" and extract_number(text, finish_reason="eos") == "17"
    assert extract_number(text, finish_reason="length") is None
