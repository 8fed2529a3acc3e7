"""A calibration's settings, their validation and its cells, checked whole before any model loads."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from rrdemo.backends.choice import BACKEND_CHOICES
from rrdemo.backends.registry import resolve
from rrdemo.config import Sampling, run_settings
from rrdemo.defaults import EXPERIMENT_DEFAULTS
from rrdemo.errors import RRError
from rrdemo.limits import limits
from rrdemo.settings import Setting, check_choice, whole_number
from rrdemo.tasks import GENERATED_TASKS, TASK_NAMES, canonical_name, load_questions
from rrdemo.tasks.base import Question

# What a corrupted agent reads: nothing added, the paper's two injections, or the user's template.
INJECTIONS: tuple[str, ...] = ("none", "moderate", "strong", "custom")

DEFAULTS: dict[str, Any] = {
    "models": ["qwen2.5-coder-1.5b"],
    "tasks": list(TASK_NAMES),
    "styles": ["direct"],
    "injections": ["none", "moderate", "strong"],
    "custom_template": None,
    "n": 20,  # questions per task in the calibration split
    "split_seed": 1,  # draws the split; held-out questions are the rest of each task
    "max_tokens": 512,  # L of one answer
    "temperature": EXPERIMENT_DEFAULTS.temperature,
    "top_p": EXPERIMENT_DEFAULTS.top_p,
    "seed": EXPERIMENT_DEFAULTS.seed,  # sampling and targets, as an experiment with this seed
    "source": "auto",
    "backend": "auto",
}


@dataclass(frozen=True)
class Cell:
    """One measured combination: a model answering a task in a prompt style under an injection."""

    model: str
    task: str
    style: str
    injection: str

    @property
    def key(self) -> str:
        return f"{self.model}|{self.task}|{self.style}|{self.injection}"


@dataclass(frozen=True)
class CalibrationPlan:
    """Everything a calibration will run: its settings, cells and the split of each task."""

    settings: dict[str, Any]
    cells: tuple[Cell, ...]
    split: dict[str, tuple[Question, ...]]  # task -> its calibration questions

    @property
    def sampling(self) -> Sampling:
        s = self.settings
        return Sampling(s["temperature"], s["top_p"], s["seed"])

    @property
    def n_answers(self) -> int:
        return sum(len(self.split[cell.task]) for cell in self.cells)


def calibrated(key: str) -> Setting:
    """The run setting whose values a calibration lists under `key` ("styles": the prompt style)."""
    return next(s for s in run_settings() if s.calibrate == key)


def _words(value: Any, what: str) -> list[str]:
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise RRError(f"{what} must be a list or a comma-separated string, got {value!r}")
    if not value:
        raise RRError(f"give at least one of {what}")
    limits().check("sweep_values", len(value), f"the number of {what}")
    return list(dict.fromkeys(value))


def normalize_calibration(raw: dict[str, Any]) -> dict[str, Any]:
    """Fill defaults and check every value; the canonical settings the log header records."""
    unknown = sorted(set(raw) - set(DEFAULTS))
    if unknown:
        raise RRError(
            f"unknown calibration setting(s): {', '.join(unknown)}; allowed: {', '.join(DEFAULTS)}"
        )
    s = {**DEFAULTS, **{k: v for k, v in raw.items() if v is not None}}
    tasks = _words(s["tasks"], "tasks")
    tasks = list(TASK_NAMES) if tasks == ["all"] else [canonical_name(t) for t in tasks]
    if "custom" in tasks or "demo" in tasks:
        raise RRError(
            f"calibrate the paper's tasks ({', '.join(TASK_NAMES)}, or 'all') or generated ones "
            f"({GENERATED_TASKS})"
        )
    style = calibrated("styles")
    styles = [style.parse(v) for v in _words(s["styles"], f"{style.what}s")]
    injections = _words(s["injections"], "injections")
    for injection in injections:
        check_choice(injection, "injection", INJECTIONS)
    template = s["custom_template"]
    if "custom" in injections and (not template or "{target}" not in str(template)):
        raise RRError("the custom injection needs --custom-template with a {target} slot")
    models = _words(s["models"], "models")
    for model in models:
        resolve(model)
    check_choice(s["source"], "data source", ("auto", "offline", "hub"))
    check_choice(s["backend"], "backend", BACKEND_CHOICES)
    bound = limits()
    n = whole_number(s["n"], "n (questions per task)", minimum=1)
    bound.check("questions", n, "n (questions per task)")
    max_tokens = whole_number(s["max_tokens"], "L (max_tokens)", minimum=1)
    bound.check("tokens", max_tokens, "L (max_tokens)")
    if template is not None:
        bound.check("template_chars", len(str(template)), "the custom template's length")
    cells = len(models) * len(tasks) * len(styles) * len(injections)
    bound.check("conditions", cells, "the number of cells")
    bound.check("units", cells * n, "the number of answers")
    settings = {
        "models": models,
        "tasks": list(dict.fromkeys(tasks)),
        "styles": styles,
        "injections": injections,
        "custom_template": template if "custom" in injections else None,
        "n": n,
        "split_seed": whole_number(s["split_seed"], "split seed", minimum=0),
        "max_tokens": max_tokens,
        "temperature": _number(s["temperature"], "temperature"),
        "top_p": _number(s["top_p"], "top-p"),
        "seed": whole_number(s["seed"], "seed", minimum=0),
        "source": s["source"],
        "backend": s["backend"],
    }
    Sampling(settings["temperature"], settings["top_p"], settings["seed"])  # checks them
    return settings


def _number(value: Any, what: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RRError(f"{what} must be a number, got {value!r}") from None


def calibration_split(task: str, n: int, split_seed: int, source: str = "auto") -> list[Question]:
    """The calibration questions of a task: a seeded sample of n (the rest is held out)."""
    return load_questions(task, n, split_seed, source)


def plan_calibration(raw: dict[str, Any]) -> CalibrationPlan:
    """Validate a calibration and expand it into cells; loads question data, never models."""
    s = normalize_calibration(raw)
    split = {
        task: tuple(calibration_split(task, s["n"], s["split_seed"], s["source"]))
        for task in s["tasks"]
    }
    cells = tuple(
        Cell(model, task, style, injection)
        for model, task, style, injection in itertools.product(
            s["models"], s["tasks"], s["styles"], s["injections"]
        )
    )
    return CalibrationPlan(s, cells, split)
