"""The `custom` task: a free-form question typed by a user.

Its answer kind is inferred per question (multiple choice when options such as "(A) ..." or
"A) ..." are listed, else a number) unless a kind is given explicitly. Answers in normal form are
self-describing ("(B)" is a letter, "42" a number), so scoring and voting need no question.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from rrdemo.errors import RRError
from rrdemo.limits import limits
from rrdemo.tasks.answers import LETTERS, extract_letter
from rrdemo.tasks.base import AnswerKind, Question
from rrdemo.tasks.benchmarks import LetterTask, MathTask, NumberTask

KINDS: tuple[AnswerKind, ...] = ("letter", "number", "math")

_LETTER_FORM = re.compile(r"\(\s*[A-Z]\s*\)")


def detect_options(text: str) -> tuple[str, ...]:
    """Option labels listed in a question: lines "(A) ..." / "A) ...", or inline "(A) x (B) y".

    Letters must run A, B, C, ... with at least two options; otherwise there are none.
    """
    letters = re.findall(r"^\s*\(?([A-Z])\)\s*\S", text, re.MULTILINE)
    if len(letters) < 2:
        letters = re.findall(r"\(([A-Z])\)\s*[^\s()]", text)
    run = []
    for letter in letters:
        if len(run) < len(LETTERS) and letter == LETTERS[len(run)]:
            run.append(letter)
    return tuple(f"({letter})" for letter in run) if len(run) >= 2 else ()


def _task_for(
    kind: AnswerKind, options: tuple[str, ...] = ()
) -> LetterTask | NumberTask | MathTask:
    if kind == "letter":
        letters = "".join(option.strip("()") for option in options) or LETTERS
        return LetterTask("custom", "Custom", letters)
    if kind == "math":
        return MathTask("custom", "Custom")
    return NumberTask("custom", "Custom")


@dataclass(frozen=True)
class CustomTask:
    """A user's own question; `infer` picks letter vs number from the question text."""

    name: str = "custom"
    title: str = "Custom"
    kind: AnswerKind = "number"  # the kind when no options are listed (or always, if not infer)
    infer: bool = True  # multiple choice whenever the question lists options

    def question(self, text: str, gold: str | None = None, qid: str | None = None) -> Question:
        """A Question from typed text; `gold` (optional) is checked and put in normal form."""
        text = (text or "").strip()
        if not text:
            raise RRError("the question is empty; type a question (and its options, if any)")
        bounds = limits()  # compared before the text is searched for options or hashed
        bounds.check("question_chars", len(text), "the question's length in characters")
        bounds.check("question_chars", len(gold or ""), "the correct answer's length in characters")
        options = detect_options(text)
        kind: AnswerKind = "letter" if (self.infer and options) else self.kind
        if kind == "letter" and not options:
            raise RRError(
                "multiple choice needs at least two options written as '(A) ...' or 'A) ...'"
            )
        task = _task_for(kind, options)
        normal_gold = None
        if gold is not None and gold.strip():
            normal_gold = task.normalize(gold)
            if normal_gold is None or (kind == "letter" and normal_gold not in options):
                allowed = {
                    "letter": f"one of {', '.join(options)}",
                    "number": "a number such as 42 or 0.5",
                    "math": "a LaTeX answer such as \\frac{1}{2}",
                }[kind]
                raise RRError(f"the correct answer {gold!r} is not valid here; give {allowed}")
        qid = qid or "custom-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:8]
        return Question(
            task="custom",
            qid=qid,
            text=text,
            gold=normal_gold,
            options=options,
            meta={"kind": kind},
        )

    def for_question(self, question: Question) -> LetterTask | NumberTask | MathTask:
        """The concrete task (letter / number / math) that fits this question."""
        kind = question.meta.get("kind") or (
            "letter" if (self.infer and question.options) else self.kind
        )
        return _task_for(kind, question.options).for_question(question)

    def prompt(self, question: Question) -> str:
        """The prompt of the question's kind (see `benchmarks.FINAL_FORMAT`)."""
        return self.for_question(question).prompt(question)

    def extract(self, text: str, finish_reason: str | None = None) -> str | None:
        """With a fixed kind, that kind's extractor; inferred: a stated "(X)" first, else a number."""
        if not self.infer:
            return _task_for(self.kind).extract(text, finish_reason)
        letter = extract_letter(text, stated_only=True, finish_reason=finish_reason)
        if letter is not None:
            return letter
        return _task_for("math" if self.kind == "math" else "number").extract(text, finish_reason)

    def _task_of_answer(self, answer: str) -> LetterTask | NumberTask | MathTask:
        if _LETTER_FORM.fullmatch(answer.strip()):
            return _task_for("letter")
        return _task_for("math" if self.kind == "math" else "number")

    def is_correct(self, answer: str | None, gold: str | None) -> bool:
        """Compared as letters, numbers or LaTeX depending on the gold answer's form."""
        if answer is None or gold is None:
            return False
        return self._task_of_answer(gold).is_correct(answer, gold)

    def distractor(self, question: Question, seed: int) -> str:
        """A wrong option (uniform), or a wrong number / expression near the given gold."""
        return self.for_question(question).distractor(question, seed)

    def vote_key(self, answer: str) -> str:
        """Letters and numbers by normal form, LaTeX by math-verify (as the benchmark tasks do)."""
        return self._task_of_answer(answer).vote_key(answer)

    def format_target(self, answer: str) -> str:
        """ "(C)", "42" or "$\\frac{1}{2}$", by the answer's form."""
        return self._task_of_answer(answer).format_target(answer)


def custom_task(kind: str | None = None) -> CustomTask:
    """`custom` with the kind inferred per question (kind None/"auto") or fixed to one kind."""
    if kind is None or kind == "auto":
        return CustomTask()
    if kind not in KINDS:
        raise RRError(f"unknown answer kind {kind!r}; choose one of: auto, {', '.join(KINDS)}")
    return CustomTask(kind=kind, infer=False)
