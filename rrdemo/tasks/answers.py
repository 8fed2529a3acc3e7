"""Reading final answers out of free text: the shared statement rules, and option letters.

Pure functions, no heavy imports. Extraction has two stages, as lm-evaluation-harness's CoT
filters do ("strict-match", then "flexible-extract"):

  1. strict: the LAST explicit final-answer statement in the format the prompt asks for ("The
     answer is (X)." / "The answer is N." / "#### N" / "\\boxed{...}"), closed by the end of its
     sentence (or by a hedge of the writer's own: ", as instructed, although ...") and not
     negated, reported or rejected in it ("The answer is not (C).", "the claim that the answer
     is (C) is wrong" are no statements);
  2. flexible, only when the text ended on its own (finish reason "eos", or unknown): the older
     rules in a fixed order of trust, last occurrence first, on the text with the disputed mentions
     blanked out, never taking a negated mention, so neither an echo of the injection nor a
     rebuttal of it is read as the answer.

A text cut off at L (finish reason "length") without a final statement has no answer. The rules
are documented in docs/tasks.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

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
    return [tail for _, _, tail in phrase_spans(text, span)][::-1]


def phrase_spans(text: str, span: int = 160) -> list[tuple[int, int, str]]:
    """(phrase start, tail start, tail) for each answer phrase, in text order (see `phrase_tails`)."""
    spans = []
    for match in ANSWER_PHRASE.finditer(text):
        raw = text[match.end() : match.end() + span]
        stripped = raw.lstrip(" \t*_:")
        if stripped.startswith("\n"):
            stripped = stripped.lstrip()
        offset = match.end() + len(raw) - len(stripped)
        tail = stripped.split("\n", 1)[0]
        if not match.group("link") and not match.group(0).rstrip().endswith(":"):
            lead = re.match(_DECORATION + r"\S*", tail, re.IGNORECASE)
            tail = lead.group(0) if lead else ""
        spans.append((match.start(), offset, tail))
    return spans


# ---------------------------------------------------------------------------------------------
# Statements and echoes: is a mention of an answer the model's own final statement?
# ---------------------------------------------------------------------------------------------

# A sentence ends at ".", "!" or "?" followed by a space, the end or a closing "$" / "\\]" / "**"
# (not inside "1.5"), or at a line break.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$|\$|\\[\])]|\*|\))|\n")
# A clause ends where a sentence does or at ",", ";", ":" (not inside "1,200").
_CLAUSE_END = re.compile(_SENTENCE_END.pattern + r"|[,;:](?!\d)")
# After the answer, only closing decorations may come before the sentence ends.
_CLOSED = re.compile(r"(?:[ \t]|\*\*|__|\$|\}|\\\)|\\\])*(?:[.!?]|\n|$)")
# ... or a hedge of the writer's own: "(C), as instructed, although logically it should be (A)."
# still states (C) (a corrupted agent that complies and hedges has answered (C)).
_HEDGED = re.compile(
    r"(?:[ \t]|\*\*|__|\$|\}|\\\)|\\\])*,?\s*(?:as\s+(?:instructed|told|required|requested|asked)"
    r"|(?:al)?though|even\s+(?:though|if))\b",
    re.IGNORECASE,
)
# Words that make a mention rejected (negated) or somebody else's claim (reported): anywhere
# before it in its clause, the words between an answer phrase and its answer included ("The
# answer is not 20", "Wait, the previous claim that the answer is (C)"); or, right after it, a
# rejection or an attribution ("... (C) is wrong", "42 per the hint", "(C), but").
_NEGATED_BEFORE = r"\b(?:not|never|cannot|neither|nor|rather\s+than|instead\s+of)\b|n't"
_REPORTED_BEFORE = (
    r"\b(?:claim\w*|hint\w*|told|said|says?|suggest\w*|instruct\w*|suppos\w*|previous\w*"
    r"|earlier|whether)\b"
)
_DISPUTED_BEFORE = re.compile(_NEGATED_BEFORE + "|" + _REPORTED_BEFORE, re.IGNORECASE)
_DISPUTED_AFTER = re.compile(
    r"(?:\s|\*\*|\$|\}|,)*(?:(?:is|was|would\s+be|seems|appears)\s+(?:\w+\s+)?"
    r"(?:wrong|incorrect|not|false|mistaken|misleading|a\s+(?:mistake|trap))\b|isn't\b"
    r"|per\s+the\b|according\s+to\b|as\s+(?:the\s+)?(?:hint|prompt|claim|suggest)"
    r"|(?:was\s+)?(?:suggested|claimed)\b|but\b|however\b)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Mention:
    """An answer written in the text: where it is, its value, and whether it is a statement."""

    start: int  # where the mention begins (the answer phrase, or the answer itself)
    end: int  # just after the answer
    value: str
    closed: bool  # the sentence ends right after the answer (decorations, a hedge aside)
    disputed: bool  # its sentence negates, reports or rejects it: not the model's answer

    @property
    def statement(self) -> bool:
        return self.closed and not self.disputed


def mention(text: str, start: int, end: int, value: str, at: int | None = None) -> Mention:
    """Judge the answer `value` written at text[start:end] by the sentence around it.

    `at` is where the answer itself begins when `start` is its answer phrase: the words in
    between count as part of its clause ("The answer is not 20").
    """
    at = start if at is None else at
    before = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    # between the phrase and the answer, only the answer's own clause counts ("The answer is not
    # $\\frac{1}{2}$, it is $\\frac{1}{3}$" states 1/3)
    gap = max((m.end() for m in _CLAUSE_END.finditer(text, start, at)), default=start)
    after = _SENTENCE_END.search(text, end)
    rest = text[end : after.start() if after else len(text)]
    disputed = bool(
        _DISPUTED_BEFORE.search(text[before:start])
        or _DISPUTED_BEFORE.search(text[gap:at])
        or _DISPUTED_AFTER.match(rest)
    )
    closed = bool(_CLOSED.match(text, end) or _HEDGED.match(text, end))
    return Mention(start, end, value, closed, disputed)


# What the flexible rules check before they take a bare mention: a negation before it in its
# clause with only words, or options joined by "and" / "or", in between ("definitely not (C)",
# "cannot be 20", "cannot be (A) or (B)"; but not "who had not cast their votes by 16:00 is
# 3000-2000 = 1000"), or a rejection right after it.
_NEGATED = re.compile(
    r"(?:" + _NEGATED_BEFORE + r")(?:[^\d()]|\([A-Za-z]\)(?=\s*(?:and|or|nor)\b))*$",
    re.IGNORECASE,
)
_REJECTED_AFTER = re.compile(
    r"(?:\s|\*\*|\$|\})*(?:(?:is|was|would\s+be|seems|appears)\s+(?:\w+\s+)?"
    r"(?:wrong|incorrect|not|false|mistaken|misleading|a\s+(?:mistake|trap))\b|isn't\b)",
    re.IGNORECASE,
)


def negated_at(text: str, start: int, end: int) -> bool:
    """Whether the answer written at text[start:end] is negated or rejected in its sentence
    ("The answer cannot be (C).", "(A) is incorrect"): the flexible rules never take it."""
    before = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    return bool(_NEGATED.search(text[before:start]) or _REJECTED_AFTER.match(text, end))


def blank_out(text: str, mentions: Iterable[Mention]) -> str:
    """The text with every disputed mention replaced by spaces (positions kept)."""
    for m in mentions:
        if m.disputed:
            text = text[: m.start] + " " * (m.end - m.start) + text[m.end :]
    return text


# What may follow an answer that only the end of the text closes: decorations, no full stop.
_OPEN_END = re.compile(r"(?:[ \t]|\*\*|__|\$|\}|\\\)|\\\])*")


def last_statement(
    mentions: Iterable[Mention], text: str = "", finish_reason: str | None = None
) -> Mention | None:
    """The statement that ends last in the text. In a text cut off at L, a statement that only
    the end of the text closes does not count: the cut may have fallen inside it ("The answer is
    103.20827" of 103.208271768, "The answer is (C" ...)."""
    cut = cut_off(finish_reason)
    return max(
        (m for m in mentions if m.statement and not (cut and _OPEN_END.fullmatch(text, m.end))),
        key=lambda m: m.end,
        default=None,
    )


# What a prompt's answer template may hold where the answer goes, copied by a model that did not
# answer: "The answer is N.", "(X)", "ANSWER", "\\boxed{ANSWER}", "...", "<number>", "[answer]".
# Single capital letters count unless they are options of the question (`allowed`).
_PLACEHOLDER = re.compile(
    r"(?:\(\s*(?P<paren>[A-Z])\s*\)|(?P<bare>[A-Z])(?![A-Za-z0-9])|(?i:answer|final\s+answer)\b"
    r"|\.{3}|…|<[^<>\n]{1,30}>|\[[^\[\]\n]{1,30}\]|\{\s*[A-Za-z_ ]{1,30}\s*\})"
)
_PLACEHOLDER_LETTERS = "NX"  # the letters answer templates use for a value


def placeholder_end(text: str, allowed: str = "") -> int | None:
    """Where the last answer phrase followed by a template placeholder ends ("The answer is N.",
    "The answer is (X).", "The answer is $\\boxed{ANSWER}$."); None when there is none.

    A model that copies the format instead of answering has given no answer, whatever numbers its
    plan mentioned before; a real statement after the copy still counts (the extractors compare
    where each ends)."""
    found = None
    for _, offset, tail in phrase_spans(text):
        head = re.match(_DECORATION, tail, re.IGNORECASE)
        skip = head.end() if head else 0
        match = _PLACEHOLDER.match(tail, skip)
        if not match:
            continue
        letter = match.group("paren") or match.group("bare")
        if letter and (letter in allowed.upper() or letter not in _PLACEHOLDER_LETTERS):
            continue
        if _CLOSED.match(text, offset + match.end()):  # the sentence ends there, not the tail
            found = offset + match.end()
    return found


# Anything in a prompt a model could copy where its answer goes: a placeholder letter or word,
# an ellipsis, a bracketed slot. Prompts are checked against it (tests); no prompt may hold one.
_COPYABLE = re.compile(
    r"\((?:X|N)\)|\b(?:ANSWER|N|X)\b|\.{3}|…|<[A-Za-z _]{1,30}>|\[[A-Za-z _]{1,30}\]"
    r"|\{[A-Za-z_ ]{1,30}\}"
)


def copyable_placeholders(text: str) -> list[str]:
    """The placeholders in `text` a model could copy as its answer ("N", "(X)", "ANSWER", "...",
    "<answer>"), and every copied-format statement ("The answer is N."); [] when there is none."""
    found = [m.group(0) for m in _COPYABLE.finditer(text)]
    if placeholder_end(text) is not None:
        found.append("a statement with a placeholder")
    return found


def copied_over(final: Mention | None, text: str, allowed: str = "") -> bool:
    """Whether a copied placeholder comes after the final statement `final` (or there is none, or
    the statement's value is the placeholder itself: "\\boxed{ANSWER}"): then no answer."""
    copied = placeholder_end(text, allowed)
    if copied is None:
        return False
    return final is None or final.end <= copied or bool(_PLACEHOLDER.fullmatch(final.value.strip()))


def cut_off(finish_reason: str | None) -> bool:
    """Whether the text was cut off at L: then only a final statement counts."""
    return finish_reason == "length"


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


def _letter_after_phrase(tail: str, allowed: str) -> tuple[str, int] | None:
    """The option letter right at the start of a phrase tail, and where it ends in the tail."""
    head = re.match(_DECORATION, tail, re.IGNORECASE)
    skip = head.end() if head else 0
    rest = tail[skip:]
    paren = re.match(r"\(\s*(?:(?:option|choice)\s*)?([A-Za-z])\s*\)", rest, re.IGNORECASE)
    if paren and paren.group(1).upper() in allowed:
        return paren.group(1).upper(), skip + paren.end()
    bare = re.match(r"([A-Z])(?:\)|" + _BARE_END + ")", rest)
    if bare and bare.group(1) == "I" and not re.match(r"I(?:\)|" + _BARE_I_END + ")", rest):
        bare = None
    if bare and bare.group(1) in allowed:
        return bare.group(1), skip + bare.end()
    return None


# "(X) is the correct answer" / "X is the correct choice" / "D is the answer"
_CLAIM = re.compile(
    r"(?:\(([A-Za-z])\)|\b([A-Z]))\s+(?:is|would\s+be|seems)\s+(?:\w+ly\s+)?(?:the\s+)?"
    r"(?:(?:correct|right|best)(?:\s+(?:answer|option|choice))?|answer)\b"
)


def letter_mentions(text: str, allowed: str = LETTERS) -> tuple[list[Mention], list[Mention]]:
    """Letters after an answer phrase ("The answer is (B)") and letters claimed correct."""
    phrases = []
    for start, offset, tail in phrase_spans(text):
        found = _letter_after_phrase(tail, allowed)
        if found:
            phrases.append(mention(text, start, offset + found[1], letter_label(found[0])))
    claims = []
    for claim in _CLAIM.finditer(text):
        letter = (claim.group(1) or claim.group(2)).upper()
        if letter in allowed:
            claims.append(mention(text, claim.start(), claim.end(), letter_label(letter)))
    for start, end, letter in boxed_letters(text, allowed):  # "... is \\(\\boxed{E}\\)."
        claims.append(mention(text, start, end, letter_label(letter)))
    return phrases, claims


def boxed_letters(text: str, allowed: str = LETTERS) -> list[tuple[int, int, str]]:
    """(start, end, letter) of every \\boxed{E} / \\boxed{(E)} / \\boxed{\\text{(E)}} holding an
    option letter of `allowed`, in order."""
    found = []
    for start, end, contents in boxed_spans(text):
        inner = re.sub(r"\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}", r"\1", contents)
        label = normalize_letter(inner.replace("{", "").replace("}", ""))
        if label and label[1] in allowed:
            found.append((start, end, label[1]))
    return found


def extract_letter(
    text: str,
    allowed: str = LETTERS,
    stated_only: bool = False,
    finish_reason: str | None = None,
) -> str | None:
    """The option letter a model gave as its final answer, as "(X)"; None when it gave none.

    Strict: the last statement "The answer is (B)." / "Final answer: **C**" / "(D) is the correct
    answer." closed by its sentence's end and not disputed in it. Else, unless the text was cut
    off at L, flexible rules on the text without disputed mentions (first that applies wins, last
    occurrence inside a rule):
      1. an answer phrase followed by a letter: "The answer is (B) because ...";
      2. a letter claimed correct: "(D) is the correct answer, as ...", "C is the right choice",
         or boxed: "\\boxed{E}", "\\boxed{(E)}";
      3. a line holding only a letter or "Option X" (AQuA rationales end like that);
      4. the last "(X)" in the text that is not negated ("cannot be (C)", "(A) is wrong").
    A copied template placeholder after the last statement ("The answer is (X).") means no answer.
    Letters outside `allowed` (e.g. "(F)" for a 5-option question) are ignored. With
    `stated_only`, only answer phrases count (to tell "The answer is (B)" from a numeric answer).
    """
    found = letter_answer(text, allowed, stated_only, finish_reason)
    return found[0] if found else None


def letter_answer(
    text: str,
    allowed: str = LETTERS,
    stated_only: bool = False,
    finish_reason: str | None = None,
) -> tuple[str, int] | None:
    """`extract_letter`'s answer and where in the text the mention it was read from ends."""
    if not text:
        return None
    allowed = allowed.upper()
    phrases, claims = letter_mentions(text, allowed)
    final = last_statement(phrases if stated_only else phrases + claims, text, finish_reason)
    if copied_over(final, text, allowed):
        return None
    if final is not None:
        return final.value, final.end
    if cut_off(finish_reason):
        return None
    text = blank_out(text, phrases + claims)
    # 1. stated answer phrase, last one that is followed by a letter
    for _, offset, tail in reversed(phrase_spans(text)):
        found = _letter_after_phrase(tail, allowed)
        if found:
            return letter_label(found[0]), offset + found[1]
    if stated_only:
        return None
    # 2. "(X) is the correct answer" / "X is the correct choice"
    for claim in reversed(list(_CLAIM.finditer(text))):
        letter = (claim.group(1) or claim.group(2)).upper()
        if letter in allowed:
            return letter_label(letter), claim.end()
    # 2b. the last \\boxed{X} holding an option letter that is not negated
    for start, end, letter in reversed(boxed_letters(text, allowed)):
        if not negated_at(text, start, end):
            return letter_label(letter), end
    # 3. a line that is only a letter, "(X)" or "Option X"
    for line in reversed(list(re.finditer(r"[^\n]+", text.rstrip()))):
        match = re.fullmatch(
            r"\s*(?:option\s*:?\s*)?\(?([A-Z])\)?\s*\.?\s*", line.group(0), re.IGNORECASE
        )
        if (
            match
            and match.group(1).upper() in allowed
            and (
                match.group(1).isupper()
                or "(" in line.group(0)
                or "option" in line.group(0).lower()
            )
        ):
            return letter_label(match.group(1)), line.end()
    # 4. the last parenthesised option letter that is not negated
    for found in reversed(list(re.finditer(r"\(([A-Z])\)", text))):
        if found.group(1) in allowed and not negated_at(text, found.start(), found.end()):
            return letter_label(found.group(1)), found.end()
    return None


# ---------------------------------------------------------------------------------------------
# \boxed{...}: the MATH answer format, also read for numbers
# ---------------------------------------------------------------------------------------------


def boxed_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, contents) of every \\boxed{...} / \\fbox{...}, braces balanced, in order."""
    spans = []
    for match in re.finditer(r"\\(?:boxed|fbox)\s*\{", text):
        depth, start = 1, match.end()
        for index in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            if depth == 0:
                spans.append((match.start(), index + 1, text[start:index]))
                break
    return spans


def boxed_contents(text: str) -> list[str]:
    """The contents of every \\boxed{...} / \\fbox{...}, braces balanced, in order."""
    return [contents for _, _, contents in boxed_spans(text)]
