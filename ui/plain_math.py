"""LaTeX in model text, made readable for the panels: `\\( x \\)` loses its delimiters,
`\\boxed{A}` reads [A], `\\frac{3000}{100}` reads 3000/100, `\\times` reads ×. Pure functions,
no gradio; display only (answers are extracted from the raw text by the engine).

A streamed text arrives in chunks, one per agent turn, and a command can straddle two chunks, so
`plain_chunks` rewrites the chunks' joined text and hands each piece of the result back to the
chunk its source came from: the colours still say who wrote what.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

SYMBOLS = {
    "times": "×", "cdot": "·", "div": "÷", "pm": "±", "mp": "∓", "le": "≤", "leq": "≤",
    "ge": "≥", "geq": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "equiv": "≡", "pi": "π",
    "infty": "∞", "to": "→", "rightarrow": "→", "Rightarrow": "⇒", "implies": "⇒", "ldots": "…",
    "dots": "…", "cdots": "⋯", "circ": "°", "degree": "°", "quad": " ", "qquad": " ",
    "left": "", "right": "", "displaystyle": "", "alpha": "α", "beta": "β", "theta": "θ",
}  # fmt: skip
WRAPPERS = ("text", "textbf", "mathrm", "mathbf", "operatorname", "textit", "mathit")
_GROUP = r"\{([^{}]*)\}"  # one brace group without nested braces

_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r"\\[()\[\]]"), lambda m: ""),  # \( \) \[ \] math delimiters
    (re.compile(r"\\boxed" + _GROUP), lambda m: f"[{m.group(1).strip()}]"),
    (re.compile(r"\\d?frac" + _GROUP + _GROUP), lambda m: _fraction(m.group(1), m.group(2))),
    (re.compile(r"\\sqrt" + _GROUP), lambda m: f"√({m.group(1)})"),
    (re.compile(r"\\(?:" + "|".join(WRAPPERS) + r")" + _GROUP), lambda m: m.group(1)),
    (re.compile(r"\^\s*\{?\\circ\}?"), lambda m: "°"),
    (re.compile(r"\\([%$&#_{}])"), lambda m: m.group(1)),  # escaped characters
    (re.compile(r"\\[,;:! ]"), lambda m: " "),  # spacing commands
    (
        re.compile(r"\\(" + "|".join(sorted(SYMBOLS, key=len, reverse=True)) + r")(?![A-Za-z])"),
        lambda m: SYMBOLS[m.group(1)],
    ),
]
_ANY = re.compile("|".join(f"(?:{pattern.pattern})" for pattern, _ in _RULES))


def _fraction(top: str, bottom: str) -> str:
    def part(x: str) -> str:
        x = plain_math(x.strip())
        return x if re.fullmatch(r"[\w.]+", x) else f"({x})"

    return f"{part(top)}/{part(bottom)}"


def _replace(match: re.Match[str]) -> str:
    text = match.group(0)
    for pattern, replacement in _RULES:
        found = pattern.fullmatch(text)
        if found:
            return replacement(found)
    return text


def plain_math(text: str) -> str:
    """`text` with the LaTeX above rewritten (anything else left as written)."""
    return _ANY.sub(_replace, text)


def plain_chunks(texts: list[str]) -> list[str]:
    """`plain_math` over the chunks' joined text, cut back into one piece per chunk: a rewritten
    command belongs to the chunk where it starts."""
    joined = "".join(texts)
    starts = list(accumulate((len(t) for t in texts[:-1]), initial=0))
    pieces: list[list[str]] = [[] for _ in texts]

    def copy(begin: int, end: int) -> None:  # raw text: each stretch to the chunk it lies in
        while begin < end:
            chunk = bisect_right(starts, begin) - 1
            stop = min(end, starts[chunk + 1] if chunk + 1 < len(starts) else end)
            pieces[chunk].append(joined[begin:stop])
            begin = stop

    last = 0
    for match in _ANY.finditer(joined):
        copy(last, match.start())
        pieces[bisect_right(starts, match.start()) - 1].append(_replace(match))
        last = match.end()
    copy(last, len(joined))
    return ["".join(piece) for piece in pieces]
