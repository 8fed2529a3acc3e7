"""Reading final answers out of free text: option letters and plain numbers.

Pure functions, no heavy imports. Each extractor tries rules in a fixed order of trust and, inside
a rule, prefers the LAST occurrence (a model states its final answer at the end; earlier mentions
are usually options it considered). The rule order is documented in docs/tasks.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction

# ---------------------------------------------------------------------------------------------
# Shared: where a model says "this is my answer"
# ---------------------------------------------------------------------------------------------

# "The answer is", "Final answer:", "the correct answer would be", "answer =", "ANS: D" ...
ANSWER_PHRASE = re.compile(
    r"(?:final\s+answer|correct\s+(?:answer|option|choice)|best\s+(?:answer|option|choice)"
    r"|\b(?:answer|ans)\b)"
    r"(?:\s*(?:\*\*|__))?"  # markdown bold closing "**Answer:**"
    r"(?P<link>\s*(?:is\s*,?|:|=|-|would\s+be|will\s+be|should\s+be|must\s+be))?"
    r"(?:\s*(?:\*\*|__))?\s*:?",
    re.IGNORECASE,
)

# Decorations a model puts between the phrase and the answer itself.
_DECORATION = r"(?:\s|\*\*|__|\$|\\boxed\{|\\text\{|\\textbf\{|\\mathrm\{|(?:option|choice)\b)*"


def phrase_tails(text: str, span: int = 160) -> list[str]:
    """The text right after each answer phrase, last phrase first, each cut at the end of its line.

    A phrase without a link word ("answer D", but also "express the answer as a percentage")
    only counts with the answer right after it, so its tail is cut to the next word.
    """
    tails = []
    for match in ANSWER_PHRASE.finditer(text):
        tail = text[match.end() : match.end() + span]
        # An empty rest of the line ("Final Answer:\nA") continues on the next non-empty line.
        stripped = tail.lstrip(" \t*_:")
        if stripped.startswith("\n"):
            stripped = stripped.lstrip()
        tail = stripped.split("\n", 1)[0]
        if not match.group("link") and not match.group(0).rstrip().endswith(":"):
            lead = re.match(_DECORATION + r"\S*", tail, re.IGNORECASE)
            tail = lead.group(0) if lead else ""
        tails.append(tail)
    return tails[::-1]


# ---------------------------------------------------------------------------------------------
# Option letters
# ---------------------------------------------------------------------------------------------

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# A bare letter must end there ("The answer is B." / "B because"); a bare "I" also needs
# punctuation or the line end after it, so "The answer is I think ..." is not option (I).
_BARE_END = r"(?![A-Za-z0-9'’])"
_BARE_I_END = r"(?=\s*(?:$|[.,;:!)\]}*$]))"


def letter_label(letter: str) -> str:
    """The normal form of an option letter: "(B)"."""
    return f"({letter.upper()})"


def normalize_letter(value: str | None) -> str | None:
    """ "B", "(b)", "B)", " (B) " -> "(B)"; anything else -> None."""
    if value is None:
        return None
    match = re.fullmatch(r"\s*\(?\s*([A-Za-z])\s*\)?\s*\.?\s*", value)
    return letter_label(match.group(1)) if match else None


def _letter_after_phrase(tail: str, allowed: str) -> str | None:
    """The option letter right at the start of a phrase tail, if there is one."""
    head = re.match(_DECORATION, tail, re.IGNORECASE)
    rest = tail[head.end() :] if head else tail
    paren = re.match(r"\(\s*(?:(?:option|choice)\s*)?([A-Za-z])\s*\)", rest, re.IGNORECASE)
    if paren and paren.group(1).upper() in allowed:
        return paren.group(1).upper()
    bare = re.match(r"([A-Z])(?:\)|" + _BARE_END + ")", rest)
    if bare and bare.group(1) == "I" and not re.match(r"I(?:\)|" + _BARE_I_END + ")", rest):
        bare = None
    if bare and bare.group(1) in allowed:
        return bare.group(1)
    return None


def extract_letter(text: str, allowed: str = LETTERS, stated_only: bool = False) -> str | None:
    """The option letter a model gave as its final answer, as "(X)"; None when it gave none.

    Rules, first that applies wins, last occurrence inside a rule:
      1. an answer phrase followed by a letter: "The answer is (B)", "Final answer: **C**";
      2. a letter claimed correct: "(D) is the correct answer", "C is the right choice";
      3. a line holding only a letter or "Option X" (AQuA rationales end like that);
      4. the last "(X)" anywhere in the text.
    Letters outside `allowed` (e.g. "(F)" for a 5-option question) are ignored. With
    `stated_only`, only rule 1 is used (to tell "The answer is (B)" from a numeric answer).
    """
    if not text:
        return None
    allowed = allowed.upper()
    # 1. stated answer phrase, last one that is followed by a letter
    for tail in phrase_tails(text):
        letter = _letter_after_phrase(tail, allowed)
        if letter:
            return letter_label(letter)
    if stated_only:
        return None
    # 2. "(X) is the correct answer" / "X is the correct choice"
    claims = re.findall(
        r"(?:\(([A-Za-z])\)|\b([A-Z]))\s+(?:is|would\s+be|seems)\s+(?:\w+ly\s+)?(?:the\s+)?"
        r"(?:(?:correct|right|best)(?:\s+(?:answer|option|choice))?|answer)\b",
        text,
    )
    for paren, bare in reversed(claims):
        letter = (paren or bare).upper()
        if letter in allowed:
            return letter_label(letter)
    # 3. a line that is only a letter, "(X)" or "Option X"
    for line in reversed(text.strip().splitlines()):
        match = re.fullmatch(r"\s*(?:option\s*:?\s*)?\(?([A-Z])\)?\s*\.?\s*", line, re.IGNORECASE)
        if (
            match
            and match.group(1).upper() in allowed
            and (match.group(1).isupper() or "(" in line or "option" in line.lower())
        ):
            return letter_label(match.group(1))
    # 4. the last parenthesised option letter
    for letter in reversed(re.findall(r"\(([A-Z])\)", text)):
        if letter in allowed:
            return letter_label(letter)
    return None


# ---------------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------------

# 1,234.50 | 1234 | -3 | .5 | $ 12 | 3/4 ; the sign may be ASCII or a unicode minus.
NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-−])?\$?\s?"
    r"(?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d+)?(?P<frac>\.\d+)?"
    r"(?:\s?/\s?(?P<den>\d+)(?![\d.]))?"
)


def _number_value(match: re.Match[str]) -> Fraction | None:
    whole, frac, den = match.group("int"), match.group("frac"), match.group("den")
    if whole is None and frac is None:
        return None
    value = Fraction((whole or "0").replace(",", "") + (frac or ""))
    if den is not None:
        if frac is not None or int(den) == 0:
            return None
        value /= int(den)
    return -value if match.group("sign") else value


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
    values = []
    for match in NUMBER.finditer(text):
        value = _number_value(match)
        if value is not None:
            values.append(value)
    return values


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


def boxed_contents(text: str) -> list[str]:
    """The contents of every \\boxed{...} / \\fbox{...}, braces balanced, in order."""
    contents = []
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, start = 1, match.end()
        for index in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                contents.append(text[start:index])
                break
    return contents


def extract_number(text: str) -> str | None:
    """The number a model gave as its final answer, in normal form; None when it gave none.

    Rules, first that applies wins:
      1. the first number after the last answer phrase that has one ("The answer is $1,234.50.");
      2. the last \\boxed{...} holding a number;
      3. the last "#### N" (GSM8K reference style);
      4. the last number anywhere in the text.
    """
    if not text:
        return None
    for tail in phrase_tails(text):
        found = numbers_in(tail)
        if found:
            return format_number(found[0])
    for content in reversed(boxed_contents(text)):
        found = numbers_in(content)
        if found:
            return format_number(found[0])
    hashes = re.findall(r"####\s*([^\n]*)", text)
    for content in reversed(hashes):
        found = numbers_in(content)
        if found:
            return format_number(found[0])
    found = numbers_in(text)
    return format_number(found[-1]) if found else None


def first_present(values: Iterable[str | None]) -> str | None:
    """The first value that is not None."""
    return next((value for value in values if value is not None), None)
