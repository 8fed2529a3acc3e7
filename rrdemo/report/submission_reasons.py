"""The readable reasons of a rejected submission: pydantic's errors about a submission file
(`rrdemo.report.submission`), one line per problem, naming where in the file it is and what is
allowed there, never echoing what was sent."""

from __future__ import annotations

from pydantic import ValidationError

from rrdemo.config import STRENGTHS
from rrdemo.tasks import GENERATED_TASKS, TASK_NAMES
from rrdemo.tasks.generated import BEYOND_THE_PAPER


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "tagged-union") or "[" in str(part):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "file"


def readable_reasons(
    error: ValidationError,
    estimators: dict[str, str],
    settings: dict[str, tuple],
    sources: tuple[str, ...] | list[str],
) -> list[str]:
    """Turn pydantic's errors into one readable line per problem, without echoing input; the
    contract's vocabulary comes in as arguments (its estimators with their meanings, its stated
    settings with their choices, its sources)."""

    lines: list[str] = []
    for err in error.errors(include_input=False, include_url=False):
        where = _loc(tuple(err["loc"]))
        kind = err["type"]
        msg = str(err["msg"]).removeprefix("Value error, ")
        if kind == "missing" and where.endswith("estimator"):
            line = f"{where}: required field is missing; say how the accuracies were computed: " + (
                ", ".join(f"{key} ({meaning})" for key, meaning in estimators.items())
            )
        elif kind == "missing":
            line = f"{where}: required field is missing"
        elif kind == "extra_forbidden":
            line = f"{where}: unknown field; remove it (allowed fields are listed in the schema)"
        elif kind == "literal_error" and where.endswith("dataset"):
            line = (
                f"{where}: unknown dataset; allowed: the paper's {', '.join(TASK_NAMES)}, "
                f"or {GENERATED_TASKS} ({BEYOND_THE_PAPER})"
            )
        elif kind == "literal_error" and where.endswith("strength"):
            line = f"{where}: unknown strength; allowed: {', '.join(STRENGTHS)}"
        elif kind == "literal_error" and where.rpartition(".")[2] in settings:
            allowed, what = settings[where.rpartition(".")[2]]
            line = f"{where}: unknown {what}; allowed: {', '.join(allowed)}"
        elif kind == "literal_error" and where == "source":
            line = f"source: must be one of {', '.join(sources)}"
        elif kind == "literal_error" and where.endswith("estimator"):
            line = f"{where}: unknown estimator; allowed: " + ", ".join(
                f"{key} ({meaning})" for key, meaning in estimators.items()
            )
        elif kind in ("greater_than_equal", "less_than_equal", "finite_number"):
            line = f"{where}: must be a fraction between 0 and 1 ({msg}; 57.4% is 0.574)"
        else:
            line = f"{where}: {msg}"
        if kind == "value_error" and "\n" in msg:
            lines.extend(f"{where}: {part}" for part in msg.split("\n"))
        else:
            lines.append(line)
    return lines
