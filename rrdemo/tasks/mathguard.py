"""Cheap checks on LaTeX before sympy reads it: what would evaluate to a number too large to
compute (a power tower such as `9^{9^{8}}`, a long literal, a large factorial) is refused at
once, and what is plain (short, small numbers, no sums, integrals, limits or factorials) is
read right away; everything else is read in a worker process under OS limits
(`rrdemo.tasks.mathanswers`, `rrdemo.worker`).

The checks read the text once with regular expressions and bound the magnitude of every number
sympy could evaluate from it, in log10 (symbols count as 1): a literal by its value, a power by
base times exponent, a factorial n! by n log10 n, a product or sum by the sum of its parts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

MAX_LITERAL_DIGITS = 1000  # a number written out longer than this is refused
MAX_EXPONENT = 100_000  # an exponent that may evaluate above this is refused (x^{10^6} too)
MAX_VALUE_DIGITS = 10_000  # a number that may evaluate to more digits than this is refused

PLAIN_LITERAL_DIGITS = 30  # plain text: numbers of at most this many digits,
PLAIN_EXPONENT = 1000  # exponents of at most this value,
PLAIN_VALUE_DIGITS = 400  # values of at most this many digits,
PLAIN_ANSWER_CHARS = 80  # an answer (a vote key's input) of at most this many characters,
PLAIN_TEXT_CHARS = 20_000  # a model's text of at most this many characters,
# and none of these (sympy may evaluate them at length)
_HEAVY = re.compile(
    r"\\(?:sum|prod|int|iint|iiint|oint|lim|binom|[dt]binom|choose|partial|det|operatorname"
    r"|mathop|Gamma|zeta|gcd|lcm|pmod|bmod|mod)(?![A-Za-z])|(?<=[\d})\]])\s*!|\*\*|\bd[xyzt]\b",
)
_LONG_LITERAL = re.compile(rf"\d{{{MAX_LITERAL_DIGITS + 1},}}")
_PLAIN_LITERAL = re.compile(rf"\d{{{PLAIN_LITERAL_DIGITS + 1},}}")
_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_OPEN, _CLOSE = "{([", "})]"
# a math span ends at "$", a line break or the end of a sentence: numbers in different spans
# are not multiplied together
_SPANS = re.compile(r"\$|\n|\\[()\[\]]|[.;](?=\s)")


@dataclass(frozen=True)
class Bound:
    """Upper bounds, in log10, of what sympy could evaluate from a text."""

    value: float = 0.0  # the largest number of one span
    exponent: float = 0.0  # the largest exponent


def _number_log(digits: str) -> float:
    whole = digits.split(".", 1)[0].lstrip("0")
    if len(whole) > 15:
        return float(len(whole))
    value = float(whole or 0) + (1.0 if "." in digits else 0.0)
    return math.log10(value) if value > 1 else 0.0


def _closing(text: str, start: int) -> int:
    """Where the group opened at text[start] closes (its closing bracket), or len(text)."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0:
                return index
    return len(text)


def _argument(text: str, start: int) -> tuple[str, int]:
    """The argument of "^" at text[start:]: a braced group, a number, a command or one char."""
    while start < len(text) and text[start] == " ":
        start += 1
    if start >= len(text):
        return "", start
    if text[start] == "{":
        end = _closing(text, start)
        return text[start + 1 : end], end + 1
    for pattern in (_NUMBER, _COMMAND):
        found = pattern.match(text, start)
        if found:
            return found.group(0), found.end()
    return text[start], start + 1


def _power(base: float, exponent_log: float) -> float:
    """log10 of base^exponent from log10 bounds of both (inf when it cannot be held)."""
    if exponent_log > 300:
        return math.inf if base > 0 else 0.0
    return base * 10**exponent_log


def bound(text: str, depth: int = 0) -> Bound:
    """log10 bounds on the numbers and exponents sympy could evaluate from `text` (one span)."""
    if depth > 50:  # groups nested this deep are not plain and cannot be bounded cheaply
        return Bound(math.inf, math.inf)
    total = last = top_exponent = 0.0
    index = 0
    while index < len(text):
        char = text[index]
        if char.isdigit() or (char == "." and text[index + 1 : index + 2].isdigit()):
            found = _NUMBER.match(text, index)
            assert found is not None
            last, index = _number_log(found.group(0)), found.end()
        elif char in _OPEN:
            end = _closing(text, index)
            inner = bound(text[index + 1 : end], depth + 1)
            last, index = inner.value, end + 1
            top_exponent = max(top_exponent, inner.exponent)
        elif char == "^":
            argument, index = _argument(text, index + 1)
            inner = bound(argument, depth + 1)
            top_exponent = max(top_exponent, inner.value, inner.exponent)
            powered = _power(last, inner.value)
            total, last = total - last + powered, powered
            continue
        elif char == "!":
            value_log = last
            powered = _power(max(value_log, 0.0), value_log) if value_log > 0 else 0.0
            total, last, index = total - last + powered, powered, index + 1
            continue
        else:
            last, index = 0.0, index + 1
            continue
        total += last
    return Bound(total, top_exponent)


def text_bound(text: str) -> Bound:
    """`bound` of every math span of `text`: the largest value and exponent of any span."""
    if "^" not in text and "!" not in text:  # only literals: their lengths bound them
        longest = max((len(m) for m in re.findall(r"\d+", text)), default=0)
        return Bound(float(longest), 0.0)
    value = exponent = 0.0
    for span in _SPANS.split(text):
        found = bound(span)
        value, exponent = max(value, found.value), max(exponent, found.exponent)
    return Bound(value, exponent)


def refusal(text: str) -> str | None:
    """Why sympy must not read `text` at all (one sentence), or None."""
    long = _LONG_LITERAL.search(text)
    if long:
        return (
            f"it writes a number of {len(long.group(0)):,} digits, more than the "
            f"{MAX_LITERAL_DIGITS:,} this app reads"
        )
    found = text_bound(text)
    if found.exponent > math.log10(MAX_EXPONENT):
        return (
            f"it holds an exponent that may reach {_size(found.exponent)}, above this app's "
            f"limit of {MAX_EXPONENT:,} (a power tower such as 9^{{9^{{8}}}})"
        )
    if found.value > MAX_VALUE_DIGITS:
        return (
            f"it may evaluate to a number of {_size(math.log10(found.value))} digits, above "
            f"this app's limit of {MAX_VALUE_DIGITS:,}"
        )
    return None


def _size(log10: float) -> str:
    if math.isinf(log10) or log10 > 15:
        return "10^" + ("(too large to write)" if math.isinf(log10) else f"{log10:.0f}")
    return f"{10**log10:,.0f}"


def plain(text: str, answer: bool) -> bool:
    """Whether `text` (an answer when `answer`, else a model's text) is cheap to read here:
    short, small numbers and exponents, nothing sympy may evaluate at length. Assumes
    `refusal(text)` is None."""
    if len(text) > (PLAIN_ANSWER_CHARS if answer else PLAIN_TEXT_CHARS):
        return False
    if _HEAVY.search(text) or _PLAIN_LITERAL.search(text):
        return False
    found = text_bound(text)
    return found.exponent <= math.log10(PLAIN_EXPONENT) and found.value <= PLAIN_VALUE_DIGITS
