"""Reading plain numbers out of free text (GSM8K): writing forms, normal form, extraction.

The statement rules (strict final statement first, flexible rules only for a text that ended on
its own) are shared with the letter tasks, in `rrdemo.tasks.answers`.
"""

from __future__ import annotations

import re
from fractions import Fraction

from rrdemo.tasks.answers import (
    Mention,
    blank_out,
    boxed_contents,
    boxed_spans,
    copied_over,
    cut_off,
    last_statement,
    mention,
    negated_at,
    phrase_spans,
    phrase_tails,
)

# 1,234.50 | 1234 | -3 | .5 | $ 12 | 3/4 | 3 1/2 (a mixed number) | 12:30 (a time: hours);
# the sign may be ASCII or a unicode minus. A fraction's denominator may end a sentence ("3/4.").
NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-−])?\$?\s?"
    r"(?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d+)?(?P<frac>\.\d+)?"
    r"(?:(?P<mixed>[ \t](?P<num>\d+)/(?P<mden>\d+))(?!\d|\.\d|/)"
    r"|\s?/\s?(?P<den>\d+)(?!\d|\.\d)"
    r"|:(?P<minutes>[0-5]\d)(?!\d|:\d))?"
)


def _number_value(match: re.Match[str]) -> tuple[Fraction, int] | None:
    """The value of a NUMBER match and where it ends; a mixed number or time that does not hold
    ("3 5/4", "1.5:30") ends before its second part, which is read on its own."""
    whole, frac, den = match.group("int"), match.group("frac"), match.group("den")
    if whole is None and frac is None:
        return None
    value = Fraction((whole or "0").replace(",", "") + (frac or ""))
    sign = -1 if match.group("sign") else 1
    if den is not None:
        if frac is not None or int(den) == 0:
            return None
        value /= int(den)
    if match.group("mixed"):  # 3 1/2 = 3.5: a proper fraction after a whole number
        num, mden = int(match.group("num")), int(match.group("mden"))
        if frac is not None or whole is None or not 0 < num < mden:
            return sign * value, match.start("mixed")
        value += Fraction(num, mden)
    if match.group("minutes"):  # 12:30 is half past twelve, 12.5 hours (2:00 pm is 2)
        if frac is not None or whole is None:
            return sign * value, match.start("minutes") - 1
        value += Fraction(int(match.group("minutes")), 60)
    return sign * value, match.end()


def number_spans(text: str) -> list[tuple[Fraction, int, int]]:
    """(value, start, end) of every number written in the text, in order."""
    spans, position = [], 0
    while position <= len(text) and (match := NUMBER.search(text, position)) is not None:
        found = _number_value(match)
        if found is not None:
            spans.append((found[0], match.start(), found[1]))
        position = max(found[1] if found else match.end(), match.start() + 1)
    return spans


def format_number(value: Fraction) -> str:
    """Canonical decimal text: 1200, 0.5, -3; a non-terminating fraction stays "p/q" (reduced)."""
    denominator = value.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return f"{value.numerator}/{value.denominator}"
    if value.denominator == 1:
        return str(value.numerator)
    # terminating decimal: scale by 10^k until integral, then place the point
    digits = 0
    scaled = value
    while scaled.denominator != 1:
        scaled *= 10
        digits += 1
    sign = "-" if scaled < 0 else ""
    body = str(abs(scaled.numerator)).rjust(digits + 1, "0")
    return f"{sign}{body[:-digits]}.{body[-digits:]}".rstrip("0").rstrip(".")


def numbers_in(text: str) -> list[Fraction]:
    """Every number written in the text, in order of appearance."""
    return [value for value, _, _ in number_spans(text)]


def normalize_number(value: str | None) -> str | None:
    """ "1,200.00" -> "1200", "$0.50" -> "0.5", "−3" -> "-3"; None when the text holds no number."""
    if value is None:
        return None
    found = numbers_in(value)
    return format_number(found[0]) if found else None


def number_value(value: str) -> Fraction | None:
    """The exact value of a normal-form (or any written) number."""
    found = numbers_in(value)
    return found[0] if found else None


def number_mentions(text: str) -> list[Mention]:
    """Numbers after an answer phrase, in \\boxed{} and after "####", in text order.

    \\boxed{} and "####" are final-answer formats of their own: they need no closing sentence end.
    """
    mentions = []
    for start, offset, tail in phrase_spans(text):
        found = number_spans(tail)
        if found:
            value, at, end = found[0]
            mentions.append(mention(text, start, offset + end, format_number(value), offset + at))
    explicit = [(a, b, c) for a, b, c in boxed_spans(text)]
    explicit += [(m.start(), m.end(), m.group(1)) for m in re.finditer(r"####\s*([^\n]*)", text)]
    for start, end, content in explicit:
        found = numbers_in(content)
        if found:
            judged = mention(text, start, end, format_number(found[0]))
            mentions.append(Mention(start, end, judged.value, True, judged.disputed))
    return sorted(mentions, key=lambda m: m.start)


def extract_number(text: str, finish_reason: str | None = None) -> str | None:
    """The number a model gave as its final answer, in normal form; None when it gave none.

    Strict: the last undisputed "The answer is N." (closed by its sentence's end), "\\boxed{N}"
    or "#### N"; none when a copied template placeholder ("The answer is N.") comes after the
    last statement. Else, unless the text was cut off at L, flexible rules on the text without
    disputed mentions, first that applies wins:
      1. the first number after the last answer phrase that has one ("The answer is 3 apples");
      2. the last \\boxed{...} holding a number;
      3. the last "#### N" (GSM8K reference style);
      4. the last number in the text that is not negated or rejected, nor a step or list label
         ("Step 4:", "6. " opening a line).
    """
    if not text:
        return None
    mentions = number_mentions(text)
    final = last_statement(mentions, text, finish_reason)
    if copied_over(final, text):  # "First we need packages of 2. The answer is N."
        return None
    if final is not None:
        return final.value
    if cut_off(finish_reason):
        return None
    text = blank_out(text, mentions)
    boxed, hashes = boxed_contents(text), re.findall(r"####\s*([^\n]*)", text)
    for piece in (*phrase_tails(text), *reversed(boxed), *reversed(hashes)):  # rules 1 to 3
        found = numbers_in(piece)
        if found:
            return format_number(found[0])
    for value, start, end in reversed(number_spans(text)):
        if not negated_at(text, start, end) and not _label_at(text, start, end):
            return format_number(value)
    return None


# A step or list label: "Step 4:", or a number opening its line followed by "." / ")" ("6. The
# answer is N." echoes the format after a numbered plan; its 6 is no answer).
_STEP_BEFORE = re.compile(r"\bstep\s*$", re.IGNORECASE)
_LABEL_AFTER = re.compile(r"[.):][ \t]+\S")  # more text follows on its line


def _label_at(text: str, start: int, end: int) -> bool:
    """Whether the number at text[start:end] labels a step or list item."""
    if _STEP_BEFORE.search(text, max(0, start - 12), start):
        return True
    line_start = text.rfind("\n", 0, start) + 1
    return not text[line_start:start].strip() and bool(_LABEL_AFTER.match(text, end))
