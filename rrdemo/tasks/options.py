"""A multiple-choice answer that names an option's content instead of its letter.

Asked for a letter, a model sometimes ends on the option's value: "The cost price of the article
is 280." or "... holds \\boxed{40}." where option (C) reads "280". When a text that ended on its
own states no letter anywhere (`rrdemo.tasks.answers.extract_letter` found none), its final
sentence is read as the one option it names, and only when it names exactly one:

- an option whose content is a single number ("280", "24 minutes", "Rs. 1,140", "1/3") is named
  when the sentence states its value: the one number in the sentence's last \\boxed{}, or, with
  no \\boxed{}, any number of the sentence ("he sold 12 bags" names "(A) 12"; "270 or 280" names
  two options, so none);
- any other option ("The bus is the oldest", "Ophelia", "5(√3 + 1)") is named when its content
  appears in the sentence as whole words (case and spacing aside).

A negated sentence ("..., not 280.") names nothing, nor does one naming two options, nor a last
line that starts with an option label ("C) The owl is the leftmost", "B: Ada finished last"): a
model listing the options, or pairing a letter with another option's content, states no answer.

**The last conclusion is the answer.** A stated letter is not the answer when a later sentence
concludes on another option by its value (`concluded_option`): "The answer is (D). ... 8 + 16 = 24.
Therefore, the number you end with is 24." under "(A) 24" reads (A), as a grader would; in RR texts
writers alternate, and a later writer may work past an earlier one's letter. A sentence concludes
from a conclusion word on ("therefore", "thus", "hence", "in conclusion", "in summary", "so the
answer/result ...", "the final answer/result ...") or from an answer phrase with its link ("the
answer is") or its last \\boxed{} (a final-answer format of its own); what it states is its last \\boxed{} number, else the numbers after its last "=",
else every number in it. A check that only repeats the stated option ("The answer is (A) 24.
Check: 8 + 16 = 24.") concludes nothing new, and a later letter statement is again the last one;
a concluding sentence that writes a letter itself ("The correct answer is indeed (E) 33." under
"(D) 33 ... (E) 45") is a letter statement, read by its letter.
"""

from __future__ import annotations

import re
from fractions import Fraction

from rrdemo.tasks.answers import ANSWER_PHRASE, boxed_spans, cut_off
from rrdemo.tasks.numbers import numbers_in

_OPTION_LINE = re.compile(r"^\(?([A-Z])\)[ \t]*(\S.*?)\s*$", re.MULTILINE)
_NEGATION = re.compile(r"\b(?:not|never|cannot|neither|nor|instead)\b|n't", re.IGNORECASE)
# A sentence ends at . ! ? before a space or the end, or at a line break.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_LATEX_DELIMITERS = re.compile(r"\\[()\[\]]|\$|\*\*|__")
_LABELLED_LINE = re.compile(r"^\s*(?:option\s*)?\(?[A-Z]\s*[).:]", re.IGNORECASE)
# Where a sentence starts to conclude: a conclusion word, or a final-answer wording.
_CONCLUSION = re.compile(
    r"\b(?:therefore|thus|hence|in\s+conclusion|in\s+summary"
    r"|so,?\s+the\s+(?:final\s+)?(?:answer|result|number|value|total)"
    r"|the\s+final\s+(?:answer|result|number|value))\b",
    re.IGNORECASE,
)
# An option label written in a sentence: "(E)".
_OPTION_LABEL = re.compile(r"\(([A-Z])\)")
# A sentence with its end: up to . ! ? before a space or the end, or up to a line break.
_SENTENCE = re.compile(r"[^\n]*?(?:[.!?](?=\s|$)|(?=\n)|$)")


def option_contents(question_text: str) -> tuple[tuple[str, str], ...]:
    """(letter, content) of every option listed in a question, a "(X) content" or "X) content" line
    each, after "Options:" when the text has that heading, in order:
    "(C) 280" -> ("C", "280")."""
    listed = question_text.split("Options:", 1)[-1]
    return tuple((letter, content) for letter, content in _OPTION_LINE.findall(listed))


def _single_number(text: str) -> Fraction | None:
    found = numbers_in(text)
    return found[0] if len(found) == 1 else None


def _words(text: str) -> str:
    """Lower case, LaTeX delimiters and punctuation at word edges dropped, spaces collapsed."""
    text = _LATEX_DELIMITERS.sub(" ", text.lower())
    return " ".join(word.strip(".,;:!?\"'") for word in text.split())


def final_sentence(text: str) -> str:
    """The text's last sentence, without its closing punctuation."""
    pieces = [piece.strip() for piece in _SENTENCE_BREAK.split(text.strip()) if piece.strip()]
    return pieces[-1].rstrip(".!?").strip() if pieces else ""


def stated_values(sentence: str) -> set[Fraction]:
    """The values a sentence states: its last \\boxed{}'s number (when it holds one), else every
    number in it."""
    boxed = boxed_spans(sentence)
    if boxed:
        value = _single_number(boxed[-1][2])
        return {value} if value is not None else set()
    return set(numbers_in(_LATEX_DELIMITERS.sub(" ", sentence)))


def _concluding_clause(sentence: str) -> str | None:
    """The part of a sentence from where it concludes on, or None when it concludes nothing."""
    starts = [m.start() for m in _CONCLUSION.finditer(sentence)]
    starts += [m.start() for m in ANSWER_PHRASE.finditer(sentence) if m.group("link")]
    starts += [start for start, _, _ in boxed_spans(sentence)[-1:]]  # a final-answer format
    return sentence[max(starts) :] if starts else None


def _concluded_values(clause: str) -> set[Fraction]:
    """What a concluding clause states: its last \\boxed{} number, else the numbers after its last
    "=", else every number in it."""
    if boxed_spans(clause):
        return stated_values(clause)
    if "=" in clause:
        return set(numbers_in(_LATEX_DELIMITERS.sub(" ", clause.rsplit("=", 1)[1])))
    return stated_values(clause)


def concluded_values_of(text: str) -> set[Fraction]:
    """Every value the concluding sentences of `text` state (`_concluded_values`)."""
    values: set[Fraction] = set()
    for match in _SENTENCE.finditer(text):
        clause = _concluding_clause(match.group(0))
        if clause is not None and not _NEGATION.search(clause):
            values |= _concluded_values(clause)
    return values


def concluded_option(
    text: str,
    contents: tuple[tuple[str, str], ...],
    allowed: str,
    finish_reason: str | None = None,
) -> str | None:
    """The option ("(A)") that the last concluding sentence of `text` names by its value, when one
    names exactly one; None when no sentence does. `text` is what follows a stated letter; in a
    text cut off at L the unfinished last sentence does not count."""
    sentences = [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip()]
    if sentences and cut_off(finish_reason) and not re.search(r"[.!?]\W*$", sentences[-1]):
        sentences.pop()
    for sentence in reversed(sentences):
        clause = _concluding_clause(sentence)
        if clause is None or _NEGATION.search(clause) or _LABELLED_LINE.match(sentence):
            continue
        if any(letter in allowed for letter in _OPTION_LABEL.findall(sentence)):
            continue  # it states a letter itself: that is a letter statement, read as one
        named = _named(clause, _concluded_values(clause), contents, allowed)
        if len(named) == 1:
            return f"({named.pop()})"
    return None


def _named(
    sentence: str, values: set[Fraction], contents: tuple[tuple[str, str], ...], allowed: str
) -> set[str]:
    """The letters of the options a sentence names: a one-number option by a value it states,
    any other by its words."""
    words = f" {_words(sentence)} "
    named = set()
    for letter, content in contents:
        if letter not in allowed:
            continue
        number = _single_number(content)
        if number is not None:
            if number in values:
                named.add(letter)
        elif _words(content) and f" {_words(content)} " in words:
            named.add(letter)
    return named


def stated_option(text: str, contents: tuple[tuple[str, str], ...], allowed: str) -> str | None:
    """The option letter ("(C)") whose content the text's final sentence names, when it names
    exactly one (rules above); None otherwise."""
    sentence = final_sentence(text)
    last_line = text.strip().splitlines()[-1] if text.strip() else ""
    if not sentence or _NEGATION.search(sentence) or _LABELLED_LINE.match(last_line):
        return None
    named = _named(sentence, stated_values(sentence), contents, allowed)
    return f"({named.pop()})" if len(named) == 1 else None
