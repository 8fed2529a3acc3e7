"""Wrong target answers for the corrupted agents' injection, deterministic from (seed, qid).

The paper's distractor y' is "a discrete terminal choice" different from the gold y*: a wrong
option letter for multiple choice, and here a plausible wrong number (GSM8K) or a wrong
expression verified non-equivalent by math-verify (MATH-500). `random.Random` seeded with a
string is stable across processes and Python versions (it hashes the string with SHA-512).
"""

from __future__ import annotations

import random
import re
from fractions import Fraction

from rrdemo.errors import RRError
from rrdemo.tasks.mathanswers import (
    bounded_read,
    equivalent,
    normalize_latex,
    parse_latex,
    readable,
)
from rrdemo.tasks.numbers import format_number, number_value


def rng_for(seed: int, qid: str) -> random.Random:
    """The random stream for one question's distractor under one seed."""
    return random.Random(f"rrdemo-distractor:{seed}:{qid}")


def letter_distractor(options: tuple[str, ...], gold: str | None, seed: int, qid: str) -> str:
    """A wrong option, uniform over the options other than gold (any option when gold is unknown)."""
    wrong = sorted(option for option in options if option != gold)
    if not wrong:
        raise RRError(
            f"question {qid} has no wrong option to use as the corrupted target "
            f"(options: {', '.join(options) or 'none'})"
        )
    return rng_for(seed, qid).choice(wrong)


def _number_candidates(gold: Fraction) -> list[Fraction]:
    """Plausible slips near a numeric answer: off by a little, doubled, halved, digits swapped."""
    candidates: set[Fraction] = set()
    if gold.denominator == 1:
        magnitude = 10 ** (len(str(abs(gold.numerator))) - 1)  # 70000 -> 10000
        steps = {1, 2, 10, magnitude, 5 * magnitude // 10 or 1}
        candidates.update(gold + sign * step for step in steps for sign in (1, -1))
        candidates.update({gold * 2, gold * 10 if abs(gold) < 1000 else gold / 10})
        if gold.numerator % 2 == 0:
            candidates.add(gold / 2)
        digits = str(abs(gold.numerator))
        if len(set(digits)) > 1:
            swapped = digits[:-2] + digits[-2:][::-1]
            if not swapped.startswith("0"):
                candidates.add(Fraction(int(swapped)) * (1 if gold >= 0 else -1))
        candidates = {value for value in candidates if value.denominator == 1}
    else:
        candidates.update({gold * 2, gold / 2, gold + 1, gold - 1, Fraction(round(gold))})
        candidates.update(gold + Fraction(delta, 10) for delta in (-5, -1, 1, 5))
    if gold >= 0:  # a count or a price stays non-negative
        candidates = {value for value in candidates if value >= 0}
    candidates.discard(gold)
    return sorted(candidates)


def number_distractor(gold: str | None, seed: int, qid: str) -> str:
    """A plausible wrong number (normal form), never equal to gold."""
    value = number_value(gold) if gold else None
    if value is None:
        raise RRError(
            f"question {qid} has no numeric gold answer, so no wrong number can be chosen; "
            "give the correct answer or pick the target yourself"
        )
    return format_number(rng_for(seed, qid).choice(_number_candidates(value)))


# Fallback targets for MATH answers that offer nothing to perturb (names, words, letters).
_GENERIC_MATH = ("0", "1", "2", "-1", "\\frac{1}{2}", "\\sqrt{2}", "\\pi", "10")


def _digit_variants(gold: str, rng: random.Random) -> list[str]:
    """The gold LaTeX with one digit changed, in a seeded order."""
    positions = [match.start() for match in re.finditer(r"\d", gold)]
    rng.shuffle(positions)
    variants = []
    for position in positions:
        digits = [d for d in "0123456789" if d != gold[position]]
        leading = position == 0 or not gold[position - 1].isdigit()
        if leading and "0" in digits:  # no "07", no "0\\sqrt{13}"
            digits.remove("0")
        rng.shuffle(digits)
        variants.extend(gold[:position] + digit + gold[position + 1 :] for digit in digits[:3])
    return variants


def _symbolic_variants(gold: str) -> list[str]:
    """Simple algebraic slips of a parsed expression (doubled, plus one, negated), as LaTeX."""
    parsed = parse_latex(gold)
    if not parsed:
        return []
    import sympy

    expr = parsed[0]
    if not isinstance(expr, sympy.Expr):
        return []
    return [sympy.latex(variant) for variant in (2 * expr, expr + 1, -expr)]


def _word_variants(gold: str, question_text: str) -> list[str]:
    """For a \\text{...} answer: another option letter, or another capitalised word of the question."""
    inner = re.fullmatch(r"\\text\{\s*\(?([A-Za-z][A-Za-z ]*)\)?\s*\}", gold)
    if not inner:
        return []
    word = inner.group(1).strip()
    if len(word) == 1:  # "\text{(C)}": a multiple-choice letter
        return [f"\\text{{({letter})}}" for letter in "ABCDE" if letter != word.upper()]
    names = sorted(set(re.findall(r"\b[A-Z][a-z]{2,}\b", question_text)) - {word})
    return [f"\\text{{{name}}}" for name in names]


def math_distractor(gold: str | None, seed: int, qid: str, question_text: str = "") -> str:
    """A wrong LaTeX answer (normal form), checked not equivalent to gold with math-verify."""
    gold = normalize_latex(gold)
    if gold is None:
        raise RRError(
            f"question {qid} has no gold answer, so no wrong expression can be chosen; "
            "give the correct answer or pick the target yourself"
        )
    rng = rng_for(seed, qid)
    value = number_value(gold) if re.fullmatch(r"-?\d+", gold) else None
    if value is not None:  # an integer answer: a plausible nearby integer
        ordered = [format_number(v) for v in _number_candidates(value)]
        rng.shuffle(ordered)
    else:
        words = _word_variants(gold, question_text)
        rng.shuffle(words)
        symbolic = bounded_read(_symbolic_variants, (gold,), (gold,), [], answer=True)
        rng.shuffle(symbolic)
        ordered = words + _digit_variants(gold, rng) + symbolic
    generic = list(_GENERIC_MATH)
    rng.shuffle(generic)
    for candidate in ordered + generic:
        candidate = normalize_latex(candidate)
        if not candidate or candidate == gold or not readable(candidate):
            continue
        if not equivalent(gold, candidate) and not equivalent(candidate, gold):
            return candidate
    raise RRError(f"no wrong answer distinct from {gold!r} was found for question {qid}")
