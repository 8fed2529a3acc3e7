"""Cheap checks on LaTeX before sympy reads it: what would evaluate to a number too large to
compute (a power tower such as `9^{9^{8}}`, a long literal, a large factorial) is refused at
once, and what is plain (short, small numbers, no sums, integrals, limits or factorials) is
read right away; everything else is read in a worker process under OS limits
(`rrdemo.tasks.mathanswers`, `rrdemo.worker`).

The checks read the text once with regular expressions and bound the magnitude of every number
sympy could evaluate from it, in log10 (symbols count as 1): a literal by its value, a power
(`^`, or Python's `**`) by base times exponent, a factorial n! by n log10 n, a product or sum inside
a power's base or exponent by the sum of its parts.
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
    r"|mathop|Gamma|zeta|gcd|lcm|pmod|bmod|mod)(?![A-Za-z])|(?<=[\d})\]])\s*!|\bd[xyzt]\b",
)
_LONG_LITERAL = re.compile(rf"\d{{{MAX_LITERAL_DIGITS + 1},}}")
_PLAIN_LITERAL = re.compile(rf"\d{{{PLAIN_LITERAL_DIGITS + 1},}}")
_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
_DIGIT_RUN = re.compile(r"\d+")
_POWERS = re.compile(r"\^|\*\*|!")
_BRACKET = re.compile(r"[{}()\[\]]")
_BASE_CHARS = 2000  # how far back a power's base is read
_TOKEN = re.compile(
    r"(?P<number>\d+(?:\.\d*)?|\.\d+)|(?P<open>[{(\[])|(?P<power>\^|\*\*)|(?P<factorial>!)"
    r"|(?P<other>[^\d{(\[^!*.]+|.)",
    re.DOTALL,
)
_COMMAND = re.compile(r"\\[A-Za-z]+")
_OPEN, _CLOSE = "{([", "})]"


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
    for found in _BRACKET.finditer(text, start):
        depth += 1 if found.group(0) in _OPEN else -1
        if depth == 0:
            return found.start()
    return len(text)


def _argument(text: str, start: int) -> tuple[str, int]:
    """The argument of "^" at text[start:]: a bracketed group, a number, a command or one char."""
    while start < len(text) and text[start] == " ":
        start += 1
    if start >= len(text):
        return "", start
    if text[start] in _OPEN:  # "^{...}", and "**(...)" in Python a model writes
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
    while (token := _TOKEN.match(text, index)) is not None:
        kind, index = token.lastgroup, token.end()
        if kind == "number":
            last = _number_log(token.group(0))
        elif kind == "open":
            end = _closing(text, token.start())
            inner = bound(text[index:end], depth + 1)
            last, index = inner.value, end + 1
            top_exponent = max(top_exponent, inner.exponent)
        elif kind == "power":  # "^" or Python's "**": base `last`, exponent what follows
            argument, index = _argument(text, index)
            inner = bound(argument, depth + 1)
            top_exponent = max(top_exponent, inner.value, inner.exponent)
            powered = _power(last, inner.value)
            total, last = total - last + powered, powered
            continue
        elif kind == "factorial":  # n! has about n log10 n digits
            powered = _power(last, last) if last > 0 else 0.0
            total, last = total - last + powered, powered
            continue
        else:  # words, operators, a closing bracket: what follows has a new base
            last = 0.0
            continue
        total += last
    return Bound(total, top_exponent)


def text_bound(text: str) -> Bound:
    """log10 bounds on the largest number and exponent sympy could evaluate from `text`: each
    power and factorial bounded from its own base and exponent (a text's prose is skipped in
    C), and no literal larger than the longest written."""
    value = float(max((len(m) for m in _DIGIT_RUN.findall(text)), default=0))
    exponent = 0.0
    for found in _POWERS.finditer(text):
        base = _base_log(text, found.start())
        if found.group(0) == "!":
            power = _power(base, base) if base > 0 else 0.0
        else:
            inner = bound(_argument(text, found.end())[0])
            exponent = max(exponent, inner.value, inner.exponent)
            power = _power(base, inner.value)
        value = max(value, power)
    return Bound(value, exponent)


def _base_log(text: str, at: int) -> float:
    """log10 bound of what stands right before text[at] (a number, a bracketed group), 0 else."""
    end = at
    while end > 0 and text[end - 1] == " ":
        end -= 1
    if end == 0:
        return 0.0
    if text[end - 1] in _CLOSE:
        depth, floor = 0, max(0, end - _BASE_CHARS)
        for index in range(end - 1, floor - 1, -1):
            char = text[index]
            depth += (char in _CLOSE) - (char in _OPEN)
            if depth == 0:
                return bound(text[index + 1 : end - 1]).value
        return bound(text[floor:end]).value  # its opening is too far back: what is read
    start = end
    while start > 0 and (text[start - 1].isdigit() or text[start - 1] == "."):
        start -= 1
    return _number_log(text[start:end]) if start < end else 0.0


def refusal(text: str) -> str | None:
    """Why sympy must not read `text` at all (one sentence), or None."""
    return classify(text, answer=True)[0]


def plain(text: str, answer: bool) -> bool:
    """Whether `text` (an answer when `answer`, else a model's text) is cheap to read here."""
    return classify(text, answer)[1]


def classify(text: str, answer: bool) -> tuple[str | None, bool]:
    """(why sympy must not read `text`, or None; whether it is plain: short, small numbers and
    exponents, nothing sympy may evaluate at length, so it is read right here). `answer`: an
    answer (a vote key's input), else a model's whole text."""
    long = _LONG_LITERAL.search(text)
    if long:
        reason = (
            f"it writes a number of {len(long.group(0)):,} digits, more than the "
            f"{MAX_LITERAL_DIGITS:,} this app reads"
        )
        return reason, False
    found = text_bound(text)
    if found.exponent > math.log10(MAX_EXPONENT):
        reason = (
            f"it holds an exponent that may reach {_size(found.exponent)}, above this app's "
            f"limit of {MAX_EXPONENT:,} (a power tower such as 9^{{9^{{8}}}})"
        )
        return reason, False
    if found.value > MAX_VALUE_DIGITS:
        reason = (
            f"it may evaluate to a number of {_size(math.log10(found.value))} digits, above "
            f"this app's limit of {MAX_VALUE_DIGITS:,}"
        )
        return reason, False
    plain = (
        len(text) <= (PLAIN_ANSWER_CHARS if answer else PLAIN_TEXT_CHARS)
        and found.exponent <= math.log10(PLAIN_EXPONENT)
        and found.value <= PLAIN_VALUE_DIGITS
        and not _HEAVY.search(text)
        and not _PLAIN_LITERAL.search(text)
    )
    return None, plain


def _size(log10: float) -> str:
    if math.isinf(log10) or log10 > 15:
        return "10^" + ("(too large to write)" if math.isinf(log10) else f"{log10:.0f}")
    return f"{10**log10:,.0f}"
