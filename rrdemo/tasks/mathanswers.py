"""MATH-500 answers: LaTeX extraction, normal form, equivalence and voting keys via math-verify.

Equivalence is never hand-written: `math_verify.parse` turns LaTeX into sympy and
`math_verify.verify` decides. math-verify is imported inside the functions (it pulls sympy and an
ANTLR parser) so `import rrdemo.tasks` stays light.

sympy evaluates what it reads (`9^{9^{8}}` is a 41-million-digit integer) and holds the
interpreter lock while it does, so a visitor's text decides its cost. Every entry point here
(`extract_math`, `math_vote_key`, `equivalent`, `readable`) first runs the cheap checks of
`rrdemo.tasks.mathguard`: a text they refuse is not read (the answer counts as unparsed, the
reason goes to the log); a plain text is read right here; any other runs in a worker process
under CPU, memory and wall-clock limits (`rrdemo.worker`), where a computation past them is
killed and counts as unparsed too.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from rrdemo.tasks import mathguard
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
from rrdemo.worker import Refused, WorkLimits, shared_pool

_SPACING = re.compile(r"\\[!,;:> ]|\\quad|\\qquad|~")
_log = logging.getLogger(__name__)
T = TypeVar("T")
# what a worker that reads answers may spend on one call
MATH_LIMITS = WorkLimits(cpu_seconds=5, wall_seconds=10.0, memory_bytes=2 << 30)
_PRELOAD = ("rrdemo.tasks.mathanswers", "math_verify", "sympy")


def bounded_read(
    fn: Callable[..., T], texts: tuple[str, ...], args: tuple, fallback: T, answer: bool
) -> T:
    """`fn(*args)` where reading `texts` costs what its checks say: refused (`fallback`, the
    reason logged), here when every text is plain, else in the answer worker (`fallback` when
    it is stopped)."""
    plain = True
    for text in texts:
        reason, cheap = mathguard.classify(text, answer)
        if reason is not None:
            _log.warning("MATH answer not read, counted as unparsed: %s (%.60r)", reason, text)
            return fallback
        plain = plain and cheap
    if plain:
        return fn(*args)
    try:
        return _in_worker(fn, args)
    except Refused as exc:
        _log.warning("MATH answer not read, counted as unparsed: %s (%.60r)", exc, texts[-1])
        return fallback


@lru_cache(maxsize=4096)
def _in_worker(fn: Callable[..., T], args: tuple) -> T:
    """`fn(*args)` in the answer worker; what it answered is kept (a refusal is not)."""
    return shared_pool("math", _PRELOAD, MATH_LIMITS).call(fn, *args)


def answer_refusal(answer: str) -> str | None:
    """Why the LaTeX `answer` (a visitor's target or gold) is not read, as one sentence; None
    when it is read."""
    reason = mathguard.refusal(answer)
    if reason is None:
        return None
    shown = answer if len(answer) <= 40 else answer[:37] + "..."
    return f"the answer {shown!r} is not read: {reason}; give a smaller expression"


def _timeout() -> int | None:
    """math-verify's alarm-based timeout in the main thread; None elsewhere (signals fail there)."""
    return 5 if threading.current_thread() is threading.main_thread() else None


def _quiet_math_verify() -> None:
    """math-verify logs a warning per call when its timeout is off; we switch it off on purpose."""
    import logging

    for name in ("math_verify", "math_verify.parser", "math_verify.grader"):
        logging.getLogger(name).setLevel(logging.ERROR)


def normalize_latex(value: str | None) -> str | None:
    """The normal form of a LaTeX answer: no \\boxed, no $ or \\( \\), no spaces; None if empty.

    A space is kept only where deleting it would glue a command to a letter ("\\pi r").
    """
    if value is None:
        return None
    text = value.strip()
    # unwrap \boxed{...} (possibly several layers) and math delimiters
    changed = True
    while changed:
        changed = False
        boxed = re.fullmatch(r"\\(?:boxed|fbox)\s*\{(.*)\}", text, re.DOTALL)
        if boxed and boxed_contents(text) and boxed_contents(text)[0] == boxed.group(1):
            text, changed = boxed.group(1).strip(), True
        for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
            if (
                len(text) >= len(left) + len(right)
                and text.startswith(left)
                and text.endswith(right)
            ):
                text, changed = text[len(left) : len(text) - len(right)].strip(), True
        stripped = text.rstrip(" .,;")
        if stripped != text:
            text, changed = stripped, True
    text = _SPACING.sub(" ", text).replace("\\displaystyle", " ")
    text = re.sub(r"\\[dt]frac(?![A-Za-z])", r"\\frac", text)
    text = re.sub(r"(\\[A-Za-z]+)\s+(?=[A-Za-z])", "\\1\u0000", text)  # protect "\pi r"
    text = re.sub(r"\s+", "", text).replace("\u0000", " ")
    return text or None


@lru_cache(maxsize=4096)
def parse_latex(value: str) -> tuple[Any, ...]:
    """math-verify's parse of one answer (sympy object first); () when it cannot read it."""
    from math_verify import parse

    _quiet_math_verify()
    try:
        return tuple(parse(f"${value}$", parsing_timeout=_timeout()))
    except Exception:  # math-verify raises odd errors on malformed LaTeX; unreadable is the answer
        return ()


def readable(value: str) -> bool:
    """Whether math-verify reads the normal-form answer `value` (bounded like every reading)."""
    return bounded_read(_readable, (value,), (value,), False, answer=True)


def _readable(value: str) -> bool:
    return bool(parse_latex(value))


def equivalent(gold: str | None, answer: str | None) -> bool:
    """Whether two LaTeX answers are mathematically the same, by math-verify (gold first)."""
    if gold is None or answer is None:
        return False
    gold_norm, answer_norm = normalize_latex(gold), normalize_latex(answer)
    if gold_norm is None or answer_norm is None:
        return False
    if gold_norm == answer_norm:
        return True
    texts = (gold_norm, answer_norm)
    return bounded_read(_verify, texts, texts, False, answer=True)


def _verify(gold_norm: str, answer_norm: str) -> bool:
    """math-verify's verdict on two normal-form answers (unbounded: see `equivalent`)."""
    from math_verify import verify

    parsed_gold, parsed_answer = parse_latex(gold_norm), parse_latex(answer_norm)
    if not parsed_gold or not parsed_answer:
        return False
    try:
        return bool(verify(list(parsed_gold), list(parsed_answer), timeout_seconds=_timeout()))
    except Exception:
        return False


def math_mentions(text: str) -> list[Mention]:
    """\\boxed{} answers (a final-answer format of their own) and answers after answer phrases."""
    from math_verify import parse

    _quiet_math_verify()
    mentions = []
    for start, end, content in boxed_spans(text):
        answer = normalize_latex(content)
        if answer:
            judged = mention(text, start, end, answer)
            mentions.append(Mention(start, end, answer, True, judged.disputed))
    boxed = [m.start for m in mentions]
    for start, offset, tail in phrase_spans(text):
        # the answer is the first math span ("$...$", "\\(...\\)") or word of the tail
        first = re.match(r"\s*(?:\$\$.+?\$\$|\$[^$]+\$|\\\(.+?\\\)|\S+)", tail)
        end = offset + (first.end() if first else 0)
        if any(start <= b < end for b in boxed):
            continue  # "The answer is $\\boxed{x}$": the \\boxed{} mention already holds x as written
        raw = _parsed_raw(parse(tail, parsing_timeout=_timeout()))
        answer = normalize_latex(raw)
        if answer:
            # where math-verify found it: the words before it belong to its clause ("is not $5$")
            where = tail.find(raw)
            at = offset + max(where, 0)
            end = max(end, at + len(raw)) if where >= 0 else end
            mentions.append(mention(text, start, end, answer, at))
    return sorted(mentions, key=lambda m: m.start)


def extract_math(text: str, finish_reason: str | None = None) -> str | None:
    """`read_math`, bounded: None (no answer) when the text is refused or its reading stopped."""
    if not text:
        return None
    return bounded_read(read_math, (text,), (text, finish_reason), None, answer=False)


def read_math(text: str, finish_reason: str | None = None) -> str | None:
    """The final answer of a MATH solution, normalised LaTeX; None when there is none.

    Strict: the last undisputed \\boxed{...} / \\fbox{...} (the prompt asks for "The answer is
    $\\boxed{...}$"), or "The answer is $...$." closed by its sentence's end, whichever comes
    last. Else, unless the text was cut off at L, flexible rules on the text without disputed
    mentions:
      1. after the last answer phrase, math-verify reads the first expression of that line;
      2. math-verify on the whole text (its own LaTeX / expression search, last match), skipping
         a match that is negated or rejected.
    """
    if not text:
        return None
    from math_verify import parse

    mentions = math_mentions(text)
    final = last_statement(mentions, text, finish_reason)
    if copied_over(final, text):  # "The answer is $\\boxed{ANSWER}$."
        return None
    if final is not None:
        return final.value
    if cut_off(finish_reason):
        return None
    text = blank_out(text, mentions)
    for tail in phrase_tails(text):
        found = normalize_latex(_parsed_raw(parse(tail, parsing_timeout=_timeout())))
        if found:
            return found
    # math-verify's last match in the whole text, unless that is negated or rejected:
    # then it is blanked and the search goes on (a few times at most)
    for _ in range(8):
        raw = _parsed_raw(parse(text, parsing_timeout=_timeout()))
        where = text.rfind(raw) if raw else -1
        if where < 0 or not negated_at(text, where, where + len(raw)):
            return normalize_latex(raw)
        text = text[:where] + " " * len(raw) + text[where + len(raw) :]
    return None


def _parsed_raw(parsed: list[Any]) -> str | None:
    """The string math-verify matched (the second item of its result), as written."""
    if len(parsed) >= 2 and isinstance(parsed[1], str):
        return parsed[1]
    return None


def math_vote_key(answer: str) -> str:
    """Equal keys for answers math-verify/sympy read as the same value ("1/2", "\\frac{1}{2}", "0.5").

    Falls back to the normal-form string when the answer cannot be parsed or canonicalised.
    """
    normal = normalize_latex(answer) or answer.strip()
    return bounded_read(_vote_key, (normal,), (normal,), f"tex:{normal}", answer=True)


def _vote_key(normal: str) -> str:
    """`math_vote_key` of a normal-form answer, unbounded."""
    parsed = parse_latex(normal)
    if not parsed:
        return f"tex:{normal}"
    import sympy

    expr = parsed[0]
    try:
        if isinstance(expr, sympy.Basic):
            if expr.atoms(sympy.Float):
                expr = sympy.nsimplify(expr, rational=True)
            if len(str(expr)) <= 200:
                expr = sympy.simplify(expr)
        return f"sym:{sympy.srepr(expr)}"
    except Exception:
        return f"tex:{normal}"
