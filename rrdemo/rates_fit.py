"""Fitting the rates file (`rrdemo.rates`, whose docstring says what it holds) from run logs.

Each method's wall time per unit is fitted as a line in the tokens it decoded, per model,
engine, method, meter and EOS policy, from the logs' "done" records; answer lengths are kept as
quantiles per model, task, prompt style, injection strength, config and method, and per model,
task, style and injection from calibration logs.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rrdemo.config import ct_label

QUANTILES = 41  # lengths kept per group: enough for a mean of min(length, L) within a token or so
MIN_UNITS = 8  # fewer finished units than this fit no speed line in the committed rates

Points = dict[tuple, list[tuple[float, float]]]  # speed key -> (decoded tokens, wall seconds)
Lengths = dict[tuple, list[int]]  # length key -> tokens of each answer or trajectory


def speed_key(model: str, engine: str, method: str, meter: bool, eos_policy: str) -> tuple:
    return (model, engine, method, bool(meter), eos_policy)


def length_key(
    model: str, task: str, prompt_style: str, strength: str, label: str, method: str
) -> tuple:
    return (model, task, prompt_style, strength, label, method)


def answer_key(model: str, task: str, style: str, injection: str) -> tuple:
    return (model, task, style, injection)


def condition_group(cond: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """(model, task, prompt style, strength, config label) of a log header's condition."""
    config = cond["config"]
    return (
        config["agents"][0]["model"],
        cond["task"],
        config.get("prompt_style") or "direct",
        cond["strength"],
        cond.get("label") or ct_label(int(cond["c"]), int(cond["n"]) - int(cond["c"])),
    )


def _fit_line(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Least squares seconds = a * decoded + b; a plain ratio (b = 0) when the line would have a
    negative part (too few or too alike units to separate them)."""
    n = len(points)
    mean_d = sum(d for d, _ in points) / n
    mean_w = sum(w for _, w in points) / n
    var = sum((d - mean_d) ** 2 for d, _ in points)
    if var > 0:
        a = sum((d - mean_d) * (w - mean_w) for d, w in points) / var
        b = mean_w - a * mean_d
        if a > 0 and b >= 0:
            return a, b
    total_d = sum(d for d, _ in points)
    return (sum(w for _, w in points) / total_d if total_d else 0.0), 0.0


def _quantiles(values: list[int]) -> list[int]:
    ordered = sorted(values)
    if len(ordered) <= QUANTILES:
        return ordered
    step = (len(ordered) - 1) / (QUANTILES - 1)
    return [ordered[round(i * step)] for i in range(QUANTILES)]


def _read_logs(paths: Sequence[Path], untimed: set[Path]) -> tuple[Points, Lengths]:
    """Each finished unit's (decoded, wall) per method, and each answer's and trajectory's
    length, of the experiment logs at `paths` (those in `untimed` give lengths only)."""
    from rrdemo.runs.log import read_log

    points: Points = defaultdict(list)
    lengths: Lengths = defaultdict(list)
    for path in paths:
        log = read_log(path)
        timed = path not in untimed
        for done, trajectories in log.units():
            if done is None or done["condition"] not in log.conditions:
                continue
            cond = log.conditions[done["condition"]]
            config = cond["config"]
            group = condition_group(cond)
            engine = config["agents"][0].get("backend") or "transformers"
            meter, eos = bool(config.get("meter")), config.get("eos_policy") or "end"
            for method, compute in (done.get("compute") or {}).items() if timed else ():
                decoded, wall = compute.get("decode_tokens"), compute.get("wall_s")
                if decoded is None or not wall:
                    continue
                points[speed_key(group[0], engine, method, meter, eos)].append((decoded, wall))
            for trajectory in trajectories:
                method, n = trajectory.get("method"), trajectory.get("n_tokens")
                if method and n is not None:
                    lengths[length_key(*group, method)].append(int(n))
                    lengths[length_key(*group[:4], "*", method)].append(int(n))
    return points, lengths


def _speeds(points: Points, min_units: int) -> list[dict[str, Any]]:
    """The fitted line of each speed key with at least `min_units` units."""
    speeds = []
    for key, found in sorted(points.items()):
        if len(found) < min_units:
            continue
        a, b = _fit_line(found)
        model, engine, method, meter, eos = key
        speeds.append(
            {
                "key": {"model": model, "engine": engine, "method": method, "meter": meter,
                        "eos_policy": eos},
                "per_token": round(a, 5),
                "per_unit": round(b, 3),
                "units": len(found),
                "decode_tokens_per_s": round(sum(d for d, _ in found) / sum(w for _, w in found), 3),
            }
        )  # fmt: skip
    return speeds


def _answer_lengths(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The quantiles of the answer lengths of the calibration logs at `paths`, per answer key."""
    from rrdemo.calibration.log import read_calibration

    answers: Lengths = defaultdict(list)
    for path in paths:
        for answer in read_calibration(path).answers:
            key = answer_key(answer["model"], answer["task"], answer["style"], answer["injection"])
            answers[key].append(int(answer["n_tokens"]))
    return [
        {
            "key": dict(zip(("model", "task", "style", "injection"), key, strict=True)),
            "quantiles": _quantiles(values),
        }
        for key, values in sorted(answers.items())
    ]


def fit_rates(
    logs: Iterable[Path | str],
    calibrations: Iterable[Path | str] = (),
    *,
    conditions: str = "",
    machine: str | None = None,
    min_units: int = MIN_UNITS,
    lengths_only: Iterable[Path | str] = (),
) -> dict[str, Any]:
    """The rates document of experiment logs and calibration logs (answer lengths only: they
    log no times); see `rrdemo.rates`. `conditions` says how the logs ran (threads, shards side
    by side, other load); `machine` defaults to this one. Logs in `lengths_only` give answer
    lengths but no speeds (they ran otherwise than the studies run now)."""
    paths = [Path(p) for p in logs]
    untimed = {Path(p) for p in lengths_only}
    points, lengths = _read_logs(paths, untimed)
    calibration_paths = [Path(p) for p in calibrations]
    names = ("model", "task", "prompt_style", "strength", "label", "method")
    return {
        "what": "rrdemo.rates: wall seconds per unit and method = per_token * decoded + per_unit, "
        "fitted on the logs' finished units; answer lengths per group as quantiles",
        "machine": machine or this_machine(),
        "conditions": conditions,
        "fitted": datetime.now(UTC).strftime("%Y-%m-%d"),
        "logs": [str(p) for p in paths],
        "lengths_only": [str(p) for p in paths if p in untimed],
        "speeds": _speeds(points, min_units),
        "lengths": [
            {"key": dict(zip(names, key, strict=True)), "quantiles": _quantiles(values)}
            for key, values in sorted(lengths.items())
        ],
        "calibrations": [str(p) for p in calibration_paths],
        "answers": _answer_lengths(calibration_paths),
    }


def this_machine() -> str:
    """The CPU model and core count."""
    import os

    from rrdemo.backends.hardware import cpu_name

    return f"{cpu_name()}, {os.cpu_count()} cores"
