"""What the engine needs from a benchmark: a question, its prompt, its answer extractor, a distractor."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

AnswerKind = Literal["letter", "number", "math"]


@dataclass(frozen=True)
class Question:
    """One benchmark item, as agents see it and as it is scored."""

    task: str  # registry name: "gsm8k", "aqua", "math500", "logic3", "logic7", "track7", "custom"
    qid: str  # stable id inside the task, e.g. "gsm8k-0042"
    text: str  # the question shown to agents (answer options included for multiple choice)
    gold: str | None = (
        None  # gold answer in the task's normal form, e.g. "(B)", "42", "\\frac{1}{2}"
    )
    options: tuple[str, ...] = ()  # multiple-choice labels in normal form, e.g. ("(A)", "(B)", ...)
    meta: dict = field(default_factory=dict, compare=False, hash=False)


@runtime_checkable
class Task(Protocol):
    """A benchmark: prompt format, answer extraction and corruption target for its questions."""

    name: str
    kind: AnswerKind

    def for_question(self, question: Question) -> Task:
        """The task that reads this question's answers: itself for a benchmark; for `custom`
        and `demo`, the letter / number / math task that fits the question."""
        ...

    def prompt(self, question: Question) -> str:
        """The user message: the question, a zero-shot chain-of-thought cue and the final-answer format."""
        ...

    def extract(self, text: str, finish_reason: str | None = None) -> str | None:
        """The final answer stated in a model's output, in normal form; None when there is none.

        `finish_reason` is how the text ended: "eos" (the model stopped), "length" (cut off at
        L: only an explicit final-answer statement counts) or None (unknown, read as complete).
        """
        ...

    def is_correct(self, answer: str | None, gold: str | None) -> bool:
        """Whether an extracted answer matches the gold answer."""
        ...

    def distractor(self, question: Question, seed: int) -> str:
        """A wrong target answer in normal form, chosen deterministically from the seed."""
        ...

    def vote_key(self, answer: str) -> str:
        """The key majority voting groups answers by: equal for answers that mean the same thing."""
        ...

    def format_target(self, answer: str) -> str:
        """A target answer as it is written into an injection text, e.g. "(C)", "42", "$\\frac{1}{2}$"."""
        ...
