"""A run's time for the front ends: expected before it starts, re-estimated from its own pace
while it runs, and the estimate beside the actual once it ends.

Before: `question_time` (the Arena's one question: MAJ's N answers and RRMaj's M trajectories)
and `sweep_time` (a sweep's plan) give an `Expected`: seconds from the committed rates
(`rrdemo.rates`: measured for the model and engine, else a measured model's speed scaled by
weight size), or none, with a line that says which. While: a `Pace` is told the work done and
the work left, in any unit (a question's tokens: `QuestionWork`; a sweep's units weighted by
their expected time: `SweepPace`), and gives the time left from the run's own pace so far,
blended with the estimate until WARMUP_SHARE of the work or WARMUP_S seconds are behind it,
then its own pace alone: a loaded machine shows its real speed within the first minute.
After: `Pace.summary()` puts the time taken beside the estimate.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rrdemo.rates import (
    UnitShape,
    committed_rates,
    duration,
    expected_time,
    speed_for,
    unit_estimate,
)

WARMUP_SHARE = 0.05  # from this share of the work done on, the run's own pace alone counts
WARMUP_S = 60.0  # ... and from this many seconds on, whatever share is done
BOTH = ("MAJ", "RRMaj")
RATES_SOURCE = "the speeds the committed study logs measured, assets/rates.json"


def clock(seconds: float) -> str:
    """A time as a person reads it: 35 s, 6 min 51 s, 1 h 05 min."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


@dataclass(frozen=True)
class Expected:
    """A run's expected wall time before it starts, and how it was reached."""

    seconds: float | None  # None: nothing measured gives one
    bounded: bool  # lengths unknown: decoding counted at its upper bound
    how: str  # where the number comes from, in words

    def line(self) -> str:
        """One line for beside a Run button."""
        if self.seconds is None:
            return (
                f"**Expected time**: not known before it starts ({self.how}); once it runs, the "
                "status line measures the time left from its own pace."
            )
        bound = "at most" if self.bounded else "about"
        return (
            f"**Expected time**: {bound} {duration(self.seconds)} on this machine ({self.how}); "
            "other visitors' runs share the machine and slow it."
        )

    def words(self) -> str:
        """The estimate inside a sentence: "about 4 min", or "none"."""
        if self.seconds is None:
            return "none"
        return f"{'at most' if self.bounded else 'about'} {duration(self.seconds)}"


def _how(hows: Sequence[str], missing: Sequence[str]) -> str:
    if missing:
        return (
            f"no speed measured for {', '.join(dict.fromkeys(missing))}, and no weight size "
            "known here to scale a measured model's speed by"
        )
    scaled = list(dict.fromkeys(h for h in hows if h))
    return "; ".join([f"from {RATES_SOURCE}", *scaled])


def _question_shapes(
    config, task_name: str, methods: Sequence[str], backend: str
) -> dict[str, UnitShape]:
    """One shape per method: MAJ's N answers, RRMaj's M trajectories, on the run's engine."""
    from rrdemo.backends.choice import with_backends

    spec = with_backends(config, backend).agents[0]  # the engine the run will use
    group = (spec.model, task_name, config.prompt_style, config.strength, config.label)
    rows = {"MAJ": config.n, "RRMaj": config.resolved_m}
    return {
        method: UnitShape(
            group,
            spec.backend,
            config.meter,
            config.eos_policy,
            (method,),
            rows.get(method, config.resolved_m),
            config.max_tokens,
        )  # fmt: skip
        for method in methods
    }


def question_time(
    config, task_name: str, methods: Sequence[str] = BOTH, backend: str = "auto"
) -> Expected:
    """The expected time of one question under `config` (a RunConfig), as the Arena runs it on
    `backend` (the engine asked for; "auto": llama.cpp for a GGUF model where installed)."""
    rates = committed_rates()
    if rates is None:
        return Expected(None, False, "no rates file (assets/rates.json) here")
    seconds, bounded, hows, missing = 0.0, False, [], []
    for method, shape in _question_shapes(config, task_name, methods, backend).items():
        [(_, _, bound, method_seconds)] = unit_estimate(shape, rates)
        bounded |= bound
        hows.append(speed_for(rates, shape.group[0], *shape.speed_key(method))[1])
        if method_seconds is None:
            missing.append(shape.group[0])
        else:
            seconds += method_seconds
    return Expected(None if missing else seconds, bounded, _how(hows, missing))


def sweep_time(units: Sequence[tuple]) -> Expected:
    """The expected time of a sweep's (condition, question) units run one after another."""
    rates = committed_rates()
    estimate = expected_time(units, rates)
    if rates is None:
        return Expected(None, False, "no rates file (assets/rates.json) here")
    how = _how(estimate.scaled, estimate.unmeasured)
    return Expected(estimate.seconds, bool(estimate.bounded), how)


@dataclass
class Pace:
    """The time left of a run from its own pace, blended with `expected` at its start."""

    expected: Expected
    now: Callable[[], float] = time.monotonic
    started: float = field(init=False)
    _moved: tuple[float, float] = field(init=False)  # (elapsed, done) when done last grew

    def __post_init__(self) -> None:
        self.started = self.now()
        self._moved = (0.0, 0.0)

    @property
    def elapsed(self) -> float:
        return self.now() - self.started

    def left(self, done: float, left: float) -> float | None:
        """Seconds left with `done` and `left` work (the same unit): the run's own pace (its
        elapsed time per unit of work done, less the time since the work last grew), blended
        with the estimate scaled to the share left; None when neither gives one."""
        elapsed, total = self.elapsed, done + left
        if total <= 0 or left <= 0:
            return 0.0
        if done > self._moved[1]:
            self._moved = (elapsed, done)
        prior = self.expected.seconds * left / total if self.expected.seconds is not None else None
        if done <= 0:
            return prior
        at, then = self._moved
        own = max(left * at / then - (elapsed - at), left * elapsed / done)
        if prior is None:
            return own
        weight = min(1.0, max(done / total / WARMUP_SHARE, elapsed / WARMUP_S))
        return weight * own + (1 - weight) * prior

    def line(self, done: float, left: float) -> str:
        """The status line's words on the time left."""
        seconds = self.left(done, left)
        if seconds is None:
            return "time left: measured from this run's pace once its first work is done"
        source = "at this run's pace" if done > 0 else "the estimate, before any work is done"
        return f"about {clock(seconds)} left ({source})"

    def summary(self) -> str:
        """The time taken beside the estimate, for the status line at the end."""
        return f"took {clock(self.elapsed)} (expected {self.expected.words()})"


class QuestionWork:
    """The tokens one question's run has decoded and has left, read from its events: each
    answer or trajectory that has not ended is expected to run to the mean length of the
    logged ones longer than what it has written (capped at L; without logged lengths, to L)."""

    def __init__(self, config, task_name: str, methods: Sequence[str] = BOTH) -> None:
        rates = committed_rates()
        shapes = _question_shapes(config, task_name, methods, "auto")  # engines already chosen
        self.cap = config.max_tokens
        self.lengths = {
            m: rates.length_weights(s.group, m) if rates else [] for m, s in shapes.items()
        }
        self.rows = {(m, i): 0 for m, s in shapes.items() for i in range(s.m)}
        self.ended: set[tuple[str, int]] = set()
        self._chunks: dict[tuple[str, int], int] = {}  # tokens of finished chunks per row

    def add(self, event) -> None:
        """Take one event of `rrdemo.protocols.run_question`."""
        row = (str(event.method), getattr(event, "trajectory", -1))
        if row not in self.rows:
            return
        if event.kind == "token_delta":  # one decoded piece: about a token
            self.rows[row] += 1
        elif event.kind == "chunk_written":
            self._chunks[row] = self._chunks.get(row, 0) + event.n_tokens
            self.rows[row] = self._chunks[row]
        elif event.kind == "answer_extracted":
            self.rows[row] = event.n_tokens
            self.ended.add(row)

    @property
    def done(self) -> float:
        return float(sum(self.rows.values()))

    @property
    def left(self) -> float:
        return sum(
            self._row_left(method, written)
            for (method, index), written in self.rows.items()
            if (method, index) not in self.ended
        )

    def _row_left(self, method: str, written: int) -> float:
        if written >= self.cap:
            return 0.0
        longer = [(min(q, self.cap), w) for q, w in self.lengths.get(method, []) if q > written]
        if not longer:  # no lengths, or longer than every logged one: to L, or halfway there
            return float(self.cap - written) / (2 if self.lengths.get(method) else 1)
        return sum(q * w for q, w in longer) / sum(w for _, w in longer) - written


class SweepPace:
    """A sweep's clock: its units in run order, each weighted by its expected seconds (1 each
    when some have none), the estimate before it starts, the time left after each unit."""

    def __init__(self, units: Sequence[tuple], now: Callable[[], float] = time.monotonic) -> None:
        rates, each = committed_rates(), {}
        for condition, question in units:
            if condition.key not in each:
                each[condition.key] = expected_time([(condition, question)], rates).seconds
        timed = all(seconds for seconds in each.values())
        self.weights = [each[c.key] if timed else 1.0 for c, _ in units]
        self.pace = Pace(sweep_time(units), now)

    @classmethod
    def of(cls, plan) -> SweepPace:
        """The clock of a sweep `plan` (rrdemo.runs.spec.Plan) run from its start."""
        from rrdemo.runs.runner import unit_order

        return cls(unit_order(plan))

    @property
    def expected(self) -> Expected:
        return self.pace.expected

    def split(self, finished: int) -> tuple[float, float]:
        """(work done, work left) after `finished` units."""
        done = sum(self.weights[:finished])
        return done, sum(self.weights) - done

    def line(self, finished: int) -> str:
        """The time left after `finished` units, for the status line."""
        return self.pace.line(*self.split(finished))

    def summary(self) -> str:
        return self.pace.summary()
