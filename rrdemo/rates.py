"""How long a sweep's units take on this machine, from speeds measured in the committed logs.

A unit (one question of one condition) runs MAJ and RRMaj; each method's wall time in a log is
close to a straight line in the tokens it decoded: `seconds = per_token * decoded + per_unit`
(`per_unit` holds what does not grow with the answer: prompts, the truth meter's reads, the
vote). `fit_rates` (`rrdemo.rates_fit`) fits that line per model, engine, method, meter and EOS
policy from the logs' "done" records, and keeps how long the answers were per model, task,
prompt style, injection strength, config and method (their quantiles). `expected_time` then gives a plan's
units: each method's expected decoded tokens (M answers or trajectories of the logged lengths,
cut at the plan's L) through the fitted line. Where the logs hold no speed for a unit's model,
the time comes from a decode rate the caller gives (`rate`, tokens per second: another machine,
a served endpoint), or is not given; where they hold no lengths, decoding is counted at its
upper bound, M x L per method, and the time says "at most".

The speeds hold for the load the logs ran under (stated in the rates file: `conditions`), one
process per shard; a study's shards run side by side, so its wall time is the shards' longest.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rrdemo.rates_fit import answer_key, condition_group, fit_rates, length_key, speed_key
from rrdemo.runs.estimate import _duration as duration  # one way to say a time

RATES_FILE = Path(__file__).resolve().parents[1] / "assets" / "rates.json"
OWN_UNITS = 2  # a run's own log: its pace under today's load counts from two units on


@dataclass(frozen=True)
class Speed:
    """One fitted line: a method's wall seconds per unit = per_token * decoded + per_unit."""

    per_token: float
    per_unit: float
    units: int  # finished units it was fitted on

    def seconds(self, decoded: float) -> float:
        return self.per_token * decoded + self.per_unit


@dataclass(frozen=True)
class TimeEstimate:
    """The expected wall time of some units, and how it was reached."""

    units: int
    seconds: float | None  # None: no measured speed and no rate given for some unit
    decode: int  # expected decoded tokens
    bounded: int  # units whose decoding is counted at its upper bound (no lengths logged)
    unmeasured: tuple[str, ...]  # models with no measured speed (the rate, or no time)
    source: str  # where the speeds come from, in words
    scaled: tuple[str, ...] = ()  # how the speeds of models with none measured were reached

    def describe(self, shards: int = 1, gpus: int | None = None) -> str:
        """One line: the time (per shard when several run side by side; in GPU hours when the
        rate is a server's on `gpus` GPUs), or why there is none."""
        if not self.units:
            return "expected time: 0 s, no units left"
        if self.seconds is None:
            return (
                f"expected time: not known for {', '.join(self.unmeasured)} (no measured speed in "
                f"{self.source}); give --rate TOKENS_PER_S for a time at that decode rate"
            )
        bound = "at most " if self.bounded else "about "
        text = f"expected time: {bound}{duration(self.seconds)} for {self.units:,} units"
        if shards > 1:
            text += f" ({duration(self.seconds / shards)} with its {shards} shards side by side)"
        if gpus:
            text += f", {self.seconds * gpus / 3600:,.1f} GPU hours on {gpus} GPU(s)"
        text += f", {self.decode:,} tokens decoded; from {self.source}"
        if self.scaled:
            text += f" ({'; '.join(self.scaled)})"
        if self.bounded:
            text += f" ({self.bounded} units with no logged lengths counted at M x L)"
        return text


class Rates:
    """A rates document (`fit_rates`, saved as assets/rates.json) with its lookups."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.speeds = {
            speed_key(**entry["key"]): Speed(entry["per_token"], entry["per_unit"], entry["units"])
            for entry in document.get("speeds", [])
        }
        self.lengths = {
            length_key(**entry["key"]): entry["quantiles"] for entry in document.get("lengths", [])
        }
        self.answers = {  # calibration: one agent's answer lengths per model, task, style, injection
            answer_key(**entry["key"]): entry["quantiles"] for entry in document.get("answers", [])
        }
        self.before: Rates | None = None  # consulted when this one has nothing (`over`)

    def over(self, other: Rates | None) -> Rates:
        """These rates first (a study's own logs), then `other`'s (the committed rates file)."""
        self.before = other
        return self

    @property
    def source(self) -> str:
        doc = self.document
        text = (
            f"speeds measured in {len(doc.get('logs', []))} log(s) "
            f"({doc.get('machine', 'machine not stated')}; {doc.get('conditions', '')})"
        ).replace("; )", ")")
        return f"{text}, else {self.before.source}" if self.before else text

    def speed(self, model: str, engine: str, method: str, meter: bool, eos: str) -> Speed | None:
        for key_engine in _engines(engine):
            found = self.speeds.get(speed_key(model, key_engine, method, meter, eos))
            if found:
                return found
        return self.before.speed(model, engine, method, meter, eos) if self.before else None

    def expected_length(self, group: tuple, method: str, cap: int) -> float | None:
        """Mean of min(length, cap) of one answer or trajectory of this group (model, task,
        style, strength, config label `3c2t`): its logged lengths; else the calibration's
        single answers, c injected and t honest ones mixed as the config has them (within a few
        tokens of the evidence runs' means, MAJ and RRMaj alike); else the logged lengths of any
        config of the model, task, style and strength; else None."""
        found = self.length_weights(group, method)
        if not found:
            return None
        return sum(min(q, cap) * w for q, w in found) / sum(w for _, w in found)

    def length_weights(self, group: tuple, method: str) -> list[tuple[float, float]]:
        """The lengths `expected_length` averages, as (length, weight) pairs; [] when none."""
        sources = (
            lambda: self._logged(group, method),
            lambda: self._calibrated(group),
            lambda: self._logged((*group[:4], "*"), method),
        )
        for source in sources:
            found = source()
            if found:
                return found
        return self.before.length_weights(group, method) if self.before else []

    def _logged(self, group: tuple, method: str) -> list[tuple[float, float]]:
        return [(q, 1.0) for q in self.lengths.get(length_key(*group, method), [])]

    def _calibrated(self, group: tuple) -> list[tuple[float, float]]:
        model, task, style, strength, label = group
        c, _, t = label.partition("c")
        if not (c.isdigit() and t.endswith("t") and t[:-1].isdigit()):
            return []
        seats = {strength: int(c), "none": int(t[:-1])}
        found = []
        for injection, count in seats.items():
            quantiles = self.answers.get(answer_key(model, task, style, injection))
            if count and not quantiles:
                return []
            found += [(q, count / len(quantiles)) for q in quantiles or []]
        return found


def _engines(engine: str) -> tuple[str, ...]:
    """The engine a spec's `backend` runs on: "auto" is llama.cpp where it is installed."""
    if engine not in ("auto", "", None):
        return (engine,)
    import importlib.util

    return ("llamacpp",) if importlib.util.find_spec("llama_cpp") else ("transformers",)


def size_gb(model: str) -> float | None:
    """A model's weights in GB as the registry states them; None for a model it does not know."""
    from rrdemo.backends.registry import resolve
    from rrdemo.errors import RRError

    try:
        return resolve(model).size_gb
    except RRError:
        return None


def speed_for(
    rates: Rates | None, model: str, engine: str, method: str, meter: bool, eos: str
) -> tuple[Speed | None, str]:
    """The speed of one method of `model`, and "" when it was measured; else the measured speed
    of the model nearest it in weight size on the same engine and method (the same meter and
    EOS policy first), scaled by their sizes' ratio (a CPU decode step reads every weight once,
    so its time grows about as the weights do: the 1.5B's measured line is 7x SmolLM2's for 11x
    the weights), with how it was reached in words; (None, "") when nothing is measured."""
    measured = rates.speed(model, engine, method, meter, eos) if rates else None
    size = size_gb(model)
    if measured or not size:
        return measured, ""
    engines, found = _engines(engine), []
    while rates is not None:
        for (other, key_engine, key_method, key_meter, key_eos), speed in rates.speeds.items():
            other_size = size_gb(other)
            if key_engine in engines and key_method == method and other_size:
                unlike = (key_meter != bool(meter)) + (key_eos != eos)
                found.append((unlike, abs(math.log(size / other_size)), other, other_size, speed))
        rates = rates.before
    if not found:
        return None, ""
    unlike, _, other, other_size, speed = min(found, key=lambda f: f[:4])  # ties: by name
    ratio = size / other_size
    how = (
        f"no speed measured for {model}: {other}'s measured speed scaled by weight size "
        f"({size:g} / {other_size:g} GB)"
    )
    if unlike:
        how += " under another meter or EOS setting"
    return Speed(speed.per_token * ratio, speed.per_unit * ratio, 0), how


def load_rates(path: Path | str = RATES_FILE) -> Rates | None:
    """The rates file, or None when there is none (a pip install without the repository)."""
    path = Path(path)
    if not path.is_file():
        return None
    return Rates(json.loads(path.read_text()))


# -- estimating -------------------------------------------------------------------------------
@dataclass(frozen=True)
class UnitShape:
    """What a unit's time depends on: its group (model, task, style, strength, config label), the
    engine, the meter and EOS policy, the methods it runs, M and L."""

    group: tuple[str, str, str, str, str]
    engine: str
    meter: bool
    eos_policy: str
    methods: tuple[str, ...]
    m: int
    max_tokens: int

    def speed_key(self, method: str) -> tuple[str, str, bool, str]:
        """(engine, method, meter, EOS policy): what `speed_for` takes after the model."""
        return (self.engine, method, self.meter, self.eos_policy)

    @classmethod
    def of(cls, condition) -> UnitShape:
        """The shape of a unit of `condition` (rrdemo.runs.spec.Condition)."""
        cfg = condition.config
        spec = cfg.agents[0]
        group = (spec.model, condition.task.name, cfg.prompt_style, cfg.strength, cfg.label)
        return cls(
            group, spec.backend, cfg.meter, cfg.eos_policy, tuple(condition.methods),
            cfg.resolved_m, cfg.max_tokens,
        )  # fmt: skip

    @classmethod
    def logged(cls, cond: dict[str, Any]) -> UnitShape:
        """The shape of a unit of a log header's condition."""
        config = cond["config"]
        return cls(
            condition_group(cond), config["agents"][0].get("backend") or "transformers",
            bool(config.get("meter")), config.get("eos_policy") or "end",
            tuple(cond.get("methods") or ("MAJ", "RRMaj")), int(cond["m_star"]),
            int(cond["max_tokens"]),
        )  # fmt: skip


def unit_estimate(
    shape: UnitShape, rates: Rates | None, rate: float | None = None
) -> list[tuple[str, float, bool, float | None]]:
    """(method, expected decoded tokens, whether that is the upper bound M x L, seconds or None)
    for each method of one unit. Seconds come from the measured line, or at `rate` decoded
    tokens/s when one is given (it replaces the measured speeds), else None."""
    found = []
    for method in shape.methods:
        mean = rates.expected_length(shape.group, method, shape.max_tokens) if rates else None
        tokens = shape.m * (shape.max_tokens if mean is None else mean)
        seconds = None
        if rate:
            seconds = tokens / rate
        elif rates:
            speed, _ = speed_for(rates, shape.group[0], *shape.speed_key(method))
            seconds = speed.seconds(tokens) if speed else None
        found.append((method, tokens, mean is None, seconds))
    return found


def expected_time(
    units: Iterable[tuple[Any, Any]],
    rates: Rates | None,
    rate: float | None = None,
    rate_source: str = "the given rate",
) -> TimeEstimate:
    """The wall time of `units` ((Condition, Question) pairs) run one after another; `rate`
    (decoded tokens/s, from `rate_source`) replaces the measured speeds when given."""
    shapes: dict[str, UnitShape] = {}
    keys = []
    for condition, _question in units:
        if condition.key not in shapes:
            shapes[condition.key] = UnitShape.of(condition)
        keys.append(condition.key)
    return _time_of(keys, shapes, rates, rate, rate_source)


def _time_of(
    keys: Sequence[str],
    shapes: dict[str, UnitShape],
    rates: Rates | None,
    rate: float | None,
    rate_source: str,
) -> TimeEstimate:
    """The time of one unit per entry of `keys` (a condition key into `shapes`)."""
    seconds, decode, bounded = 0.0, 0.0, 0
    unmeasured: dict[str, None] = {}
    scaled: dict[str, None] = {}
    estimates: dict[str, list] = {}  # one estimate per condition, reused for its questions
    for key in keys:
        if key not in estimates:
            estimates[key] = unit_estimate(shapes[key], rates, rate)
            for method in shapes[key].methods if not rate else ():
                how = speed_for(rates, shapes[key].group[0], *shapes[key].speed_key(method))[1]
                scaled.update({how: None} if how else {})
        estimate = estimates[key]
        bounded += any(bound for _, _, bound, _ in estimate)
        for _method, tokens, _bound, method_seconds in estimate:
            decode += tokens
            if method_seconds is None:
                unmeasured[shapes[key].group[0]] = None
            else:
                seconds += method_seconds
    if rate:
        source = f"{rate_source}, {rate:g} decoded tokens/s"
    else:
        source = rates.source if rates else "no rates file (assets/rates.json)"
    return TimeEstimate(
        len(keys), None if unmeasured else seconds, round(decode), bounded, tuple(unmeasured),
        source, tuple(scaled),
    )  # fmt: skip


def log_time_left(paths: Sequence[Path | str], rate: float | None = None) -> str:
    """`rrdemo status`'s last line: the time of the units the logs' header plans and no log
    holds yet, timed from the logs' own units first; several logs are shards side by side."""
    from rrdemo.runs.log import read_log

    logs = [read_log(p) for p in paths]
    done = set().union(*(log.done for log in logs))
    shapes = {key: UnitShape.logged(cond) for key, cond in logs[0].conditions.items()}
    keys = [
        key
        for key, cond in logs[0].conditions.items()
        for qid in cond.get("questions") or []
        if (key, qid) not in done
    ]
    estimate = _time_of(keys, shapes, rates_for(paths), rate, "the given rate")
    return "time left: " + estimate.describe(len(paths)).removeprefix("expected time: ")


@functools.lru_cache(maxsize=4)
def _committed(path: str, mtime: float) -> Rates | None:
    return load_rates(path)


def committed_rates() -> Rates | None:
    """The rates file, read again only when it changed (the front ends ask on every change of a
    control)."""
    path = Path(RATES_FILE)
    return _committed(str(path), path.stat().st_mtime) if path.is_file() else None


def rates_for(logs: Iterable[Path | str], rates_file: Path | str = RATES_FILE) -> Rates | None:
    """The speeds and lengths of a study's own logs (those that exist: a run's finished units
    measure it best, on the load it runs under) over the committed rates file's."""
    committed = load_rates(rates_file)
    own = [Path(p) for p in logs if Path(p).is_file()]
    if not own:
        return committed
    mine = fit_rates(own, conditions="this run's own finished units", min_units=OWN_UNITS)
    return Rates(mine).over(committed)


def calibration_estimate(
    plan, out: Path | str, shard: tuple[int, int] | None, rate: float | None
) -> str:
    """One line on the answers of a calibration `plan` (rrdemo.calibration.plan) left to write
    into `out` (a shard's share): their expected decoded tokens from the calibration lengths in
    the rates file and in `out` itself (else L each), and their time at `rate` decoded tokens/s.
    Calibration logs record no times, so nothing measured here gives one without `rate`."""
    from rrdemo.calibration.log import read_calibration
    from rrdemo.calibration.runner import answer_order

    order = answer_order(plan)
    if shard is not None:
        order = order[shard[0] - 1 :: shard[1]]
    out = Path(out)
    done = read_calibration(out).done if out.is_file() else set()
    left = [row for row in order if (row.cell.key, row.question.qid) not in done]
    if not left:
        return "expected time: 0 s, no answers left"
    rates = load_rates()
    if out.is_file():
        rates = Rates(fit_rates([], [out])).over(rates)
    cap = int(plan.settings["max_tokens"])
    tokens, bounded, seconds, scaled = 0.0, 0, 0.0, {}
    engine = str(plan.settings.get("backend") or "auto")
    for row in left:
        cell = row.cell
        key = answer_key(cell.model, cell.task, cell.style, cell.injection)
        quantiles = _answers(rates, key)
        bounded += not quantiles
        decoded = sum(min(q, cap) for q in quantiles) / len(quantiles) if quantiles else cap
        tokens += decoded
        speed, how = speed_for(rates, cell.model, engine, "MAJ", False, "end")
        scaled.update({how: None} if how else {})
        seconds = seconds + speed.per_token * decoded if speed and seconds is not None else None
    text = f"{len(left):,} answers left, about {round(tokens):,} tokens to decode"
    if bounded:
        text += f" ({bounded} with no logged lengths counted at L = {cap})"
    if rate:
        return f"{text}; expected time at {rate:g} decoded tokens/s: {duration(tokens / rate)}"
    if seconds is not None:  # calibration logs record no times; the experiment logs' MAJ does
        return (
            f"{text}; expected time: {'at most' if bounded else 'about'} {duration(seconds)} at "
            "the MAJ decode speed the committed experiment logs (assets/rates.json) measured "
            f"for the model{''.join(f' ({how})' for how in scaled)} (N = 5 answers decoded "
            "together, one pinned thread beside another; a busier machine is slower; "
            "--rate TOKENS_PER_S gives another machine's)"
        )
    return f"{text}; no decode speed is measured for its model: give --rate TOKENS_PER_S for a time"


def _answers(rates: Rates | None, key: tuple) -> list[int]:
    while rates is not None:
        if rates.answers.get(key):
            return rates.answers[key]
        rates = rates.before
    return []
