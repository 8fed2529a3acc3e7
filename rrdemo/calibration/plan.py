"""A calibration's settings, their validation and its cells, checked whole before any model loads."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from rrdemo.backends.registry import resolve
from rrdemo.config import BACKEND, STRENGTHS, Sampling, run_settings
from rrdemo.errors import RRError
from rrdemo.limits import limits
from rrdemo.settings import Setting, check_choice, whole_number
from rrdemo.tasks import GENERATED_TASKS, TASK_NAMES, canonical_name, load_questions
from rrdemo.tasks.base import Question

# What a corrupted agent reads: nothing added, the paper's two injections, or the user's template.
INJECTIONS: tuple[str, ...] = STRENGTHS
# The run settings a calibration takes one value of, checked by their declarations.
ONE_VALUE = ("custom_template", "max_tokens", "temperature", "top_p", "seed", "backend")


def declarations() -> dict[str, Setting]:
    """The declared settings a calibration reads, by name (the run's and the engine's)."""
    return {s.name: s for s in (*run_settings(), BACKEND)}


def defaults() -> dict[str, Any]:
    """Every calibration setting with its default: its own, and the run settings' declared ones
    (the prompt style's, no injection and the paper's two, L, sampling, the engine)."""
    declared = declarations()
    return {
        "models": ["qwen2.5-coder-1.5b"],
        "tasks": list(TASK_NAMES),
        "styles": [calibrated("styles").default],
        "injections": ["none", *calibrated("injections").swept],
        "custom_template": None,
        "n": 20,  # questions per task in the calibration split
        "split_seed": 1,  # draws the split; held-out questions are the rest of each task
        **{name: declared[name].default for name in ONE_VALUE[1:5]},  # seed: as an experiment's
        "source": "auto",
        "backend": BACKEND.default,
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
    allowed = defaults()
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise RRError(
            f"unknown calibration setting(s): {', '.join(unknown)}; allowed: {', '.join(allowed)}"
        )
    s = {**allowed, **{k: v for k, v in raw.items() if v is not None}}
    one = {name: d.parse(s[name]) for name, d in declarations().items() if name in ONE_VALUE}
    tasks = _words(s["tasks"], "tasks")
    tasks = list(TASK_NAMES) if tasks == ["all"] else [canonical_name(t) for t in tasks]
    if "custom" in tasks or "demo" in tasks:
        raise RRError(
            f"calibrate the paper's tasks ({', '.join(TASK_NAMES)}, or 'all') or generated ones "
            f"({GENERATED_TASKS})"
        )
    style = calibrated("styles")
    styles = [style.parse(v) for v in _words(s["styles"], f"{style.what}s")]
    injections = [calibrated("injections").parse(v) for v in _words(s["injections"], "injections")]
    template = one["custom_template"]
    if "custom" in injections and (not template or "{target}" not in str(template)):
        raise RRError("the custom injection needs --custom-template with a {target} slot")
    models = _words(s["models"], "models")
    for model in models:
        resolve(model)
    check_choice(s["source"], "data source", ("auto", "offline", "hub"))
    bound = limits()
    n = whole_number(s["n"], "n (questions per task)", minimum=1)
    bound.check("questions", n, "n (questions per task)")
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
        **{name: one[name] for name in ONE_VALUE[1:5]},
        "source": s["source"],
        "backend": one["backend"],
    }
    return settings


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
