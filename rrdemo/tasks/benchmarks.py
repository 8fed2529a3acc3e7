"""The three kinds of benchmark task: option letters, numbers and MATH expressions.

Every prompt is zero-shot chain of thought ("Let's think step by step.") followed by one sentence
that says in words how to state the final answer, so one extractor rule ("the answer is ...")
serves every task. The paper does not print its prompt; these texts are ours. No prompt shows a
placeholder where the answer goes ("The answer is N."): small models copy it instead of answering
(47% of the GSM8K answers of an earlier 1.5B sweep did), so the format is described, never shown.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rrdemo.tasks.answers import LETTERS, cut_off, letter_answer, normalize_letter
from rrdemo.tasks.base import AnswerKind, Question
from rrdemo.tasks.distractors import letter_distractor, math_distractor, number_distractor
from rrdemo.tasks.mathanswers import equivalent, extract_math, math_vote_key, normalize_latex
from rrdemo.tasks.numbers import extract_number, normalize_number, number_value
from rrdemo.tasks.options import concluded_option, option_contents, stated_option

COT_CUE = "Let's think step by step."
# Asked for explicitly: told only how to end, small models write the final sentence alone.
WORK_CUE = "Work the problem out first, showing each step."
FINAL_FORMAT: dict[str, str] = {
    "letter": (
        'Then end your response with one sentence that begins with "The answer is" and gives '
        "the letter of the correct option in parentheses."
    ),
    "number": (
        'Then end your response with one sentence that begins with "The answer is" and gives '
        "the final number, written in digits."
    ),
    "math": (
        'Then end your response with one sentence that begins with "The answer is" and gives '
        "the final answer in LaTeX, inside \\boxed{}."
    ),
}


@dataclass(frozen=True)
class PromptStyle:
    """A way of asking: the text appended to every task's prompt, and why the style exists.
    Measured answer and placeholder rates per model and task: `rrdemo calibrate`, docs/evidence.md."""

    name: str
    purpose: str
    cue: str  # appended to the task's prompt; "" adds nothing


# Each style once, one per reason (the config's `prompt_style` names one of them).
PROMPT_STYLES: dict[str, PromptStyle] = {
    "direct": PromptStyle(
        "direct",
        "the task's own prompt: think, then state the answer in the sentence it describes",
        "",
    ),
    "step-by-step": PromptStyle(
        "step-by-step",
        "for models that answer without working: reasoning as short numbered steps first",
        "Before the final answer, write your reasoning as a few short numbered steps, one per "
        "line, and compute every number you need; then write the final answer sentence.",
    ),
}


def prompt_texts() -> dict[str, object]:
    """Every text the prompts are built from (cues, answer formats, styles, injections): logged
    in run and calibration headers, so a log says which prompts produced it and a run is never
    resumed under other prompts."""
    from rrdemo.adversary import CONTEXTUAL_TEXT
    from rrdemo.corruption import TEMPLATES

    return {
        "cot_cue": COT_CUE,
        "work_cue": WORK_CUE,
        "final_format": dict(FINAL_FORMAT),
        "styles": {name: style.cue for name, style in PROMPT_STYLES.items()},
        "injections": dict(TEMPLATES),
        "contextual": CONTEXTUAL_TEXT,
    }


def styled_prompt(prompt: str, style: str = "direct") -> str:
    """A task's user message in a prompt style (`PROMPT_STYLES`)."""
    cue = PROMPT_STYLES[style].cue
    return f"{prompt} {cue}" if cue else prompt


def build_prompt(question_text: str, kind: AnswerKind) -> str:
    """The user message for one question: the question, the CoT cue, the final-answer format."""
    return f"{question_text.strip()}\n\n{COT_CUE} {WORK_CUE} {FINAL_FORMAT[kind]}"


@dataclass(frozen=True)
class LetterTask:
    """Multiple choice (AQuA, BBH): answers are option labels "(A)".."(G)"."""

    name: str
    title: str
    letters: str = LETTERS  # the option letters questions of this task can have
    kind: AnswerKind = "letter"
    # (letter, content) of the options of the one question this task reads (`for_question`)
    contents: tuple[tuple[str, str], ...] = ()

    def for_question(self, question: Question) -> LetterTask:
        """The task reading this question's answers: its option contents known, so that an answer
        naming an option's value instead of its letter is read (`rrdemo.tasks.options`)."""
        return replace(self, contents=option_contents(question.text))

    def prompt(self, question: Question) -> str:
        """Question with its options, CoT cue and the letter answer sentence."""
        return build_prompt(question.text, "letter")

    def normalize(self, answer: str | None) -> str | None:
        """A written option ("b", "B)", "(B)") in normal form "(B)"; None if it is not one."""
        return normalize_letter(answer)

    def extract(self, text: str, finish_reason: str | None = None) -> str | None:
        """The option letter stated as the final answer (rules in `extract_letter`), unless a later
        sentence concludes on another option by its value (`concluded_option`); when no letter is
        stated and the text ended on its own, the one option its final sentence names by content
        (`stated_option`). Option values are read only by a task made by `for_question`."""
        found = letter_answer(text, self.letters, finish_reason=finish_reason)
        if found is not None:
            answer, end = found
            if self.contents:
                later = concluded_option(text[end:], self.contents, self.letters, finish_reason)
                answer = later or answer
            return answer
        if self.contents and text and not cut_off(finish_reason):
            return stated_option(text, self.contents, self.letters)
        return None

    def is_correct(self, answer: str | None, gold: str | None) -> bool:
        """Same option letter."""
        return (
            answer is not None and gold is not None and self.vote_key(answer) == self.vote_key(gold)
        )

    def distractor(self, question: Question, seed: int) -> str:
        """A wrong option, uniform over the non-gold options of this question."""
        options = question.options or tuple(f"({letter})" for letter in self.letters)
        return letter_distractor(options, question.gold, seed, question.qid)

    def vote_key(self, answer: str) -> str:
        """The normal-form letter."""
        return normalize_letter(answer) or answer.strip()

    def format_target(self, answer: str) -> str:
        """ "(C)", as the paper's injections write it."""
        return self.vote_key(answer)


@dataclass(frozen=True)
class NumberTask:
    """Numeric answers (GSM8K): canonical decimal strings "1200", "0.5", "-3"."""

    name: str
    title: str
    kind: AnswerKind = "number"

    def for_question(self, question: Question) -> NumberTask:
        """Itself: every question of this task is read the same way."""
        return self

    def prompt(self, question: Question) -> str:
        """Question, CoT cue and the number answer sentence."""
        return build_prompt(question.text, "number")

    def normalize(self, answer: str | None) -> str | None:
        """ "1,200.00" -> "1200"; None if the text holds no number."""
        return normalize_number(answer)

    def extract(self, text: str, finish_reason: str | None = None) -> str | None:
        """The number stated as the final answer (rules in `extract_number`)."""
        return extract_number(text, finish_reason=finish_reason)

    def is_correct(self, answer: str | None, gold: str | None) -> bool:
        """Same numeric value."""
        if answer is None or gold is None:
            return False
        value, target = number_value(answer), number_value(gold)
        return value is not None and value == target

    def distractor(self, question: Question, seed: int) -> str:
        """A plausible wrong number near the gold (off by a little, doubled, halved, swapped digits)."""
        return number_distractor(question.gold, seed, question.qid)

    def vote_key(self, answer: str) -> str:
        """The canonical number (so "1,200" and "1200.0" vote together)."""
        return normalize_number(answer) or answer.strip()

    def format_target(self, answer: str) -> str:
        """The number as written: "42"."""
        return self.vote_key(answer)


@dataclass(frozen=True)
class MathTask:
    """Free-form LaTeX answers (MATH-500), compared with math-verify."""

    name: str
    title: str
    kind: AnswerKind = "math"

    def for_question(self, question: Question) -> MathTask:
        """Itself: every question of this task is read the same way."""
        return self

    def prompt(self, question: Question) -> str:
        """Problem, CoT cue and the boxed LaTeX answer sentence."""
        return build_prompt(question.text, "math")

    def normalize(self, answer: str | None) -> str | None:
        """LaTeX without \\boxed, $ and spaces."""
        return normalize_latex(answer)

    def extract(self, text: str, finish_reason: str | None = None) -> str | None:
        """The final LaTeX answer (rules in `extract_math`)."""
        return extract_math(text, finish_reason=finish_reason)

    def is_correct(self, answer: str | None, gold: str | None) -> bool:
        """Mathematically equal by math-verify."""
        return equivalent(gold, answer)

    def distractor(self, question: Question, seed: int) -> str:
        """A wrong expression (nearby integer, one digit changed, ...), verified non-equivalent."""
        return math_distractor(question.gold, seed, question.qid, question.text)

    def vote_key(self, answer: str) -> str:
        """Equal for answers sympy reads as the same value; else the normal-form string."""
        return math_vote_key(answer)

    def format_target(self, answer: str) -> str:
        """Inline LaTeX: "$\\frac{1}{2}$"."""
        return f"${normalize_latex(answer) or answer.strip()}$"
