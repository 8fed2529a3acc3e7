"""rrdemo.pace: a run's expected time before it starts, its time left from its own pace, and
the estimate beside the actual at the end; the front ends (the Arena, Experiments) show these."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

import pytest

from rrdemo.backends.base import Delta, GenerationOutput, GenerationRequest
from rrdemo.config import RunConfig, Sampling
from rrdemo.pace import Expected, Pace, QuestionWork, SweepPace, clock, question_time
from rrdemo.protocols import run_question
from rrdemo.rates import speed_for
from rrdemo.seats import homogeneous_agents
from tests.support.fakes import QUESTION, FakeBackend, FakePool, FakeTask

STEP_S = 0.02  # the slowed engine's sleep per decoding step


class SlowBackend(FakeBackend):
    """A scripted engine that sleeps before every token it writes: a machine far slower than
    the estimate expects."""

    def __init__(self, name: str, step_s: float) -> None:
        super().__init__(name, lambda prompt: "word " * 400)  # every answer runs to L
        self.step_s = step_s

    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        for out in super().generate(requests):
            if isinstance(out, Delta):
                time.sleep(self.step_s)
            yield out


def _config(model: str = "slow", **settings) -> RunConfig:
    base = dict(k=8, max_tokens=48, sampling=Sampling(temperature=0.0, seed=1))
    return RunConfig(agents=homogeneous_agents(model, 3, 1), **{**base, **settings})


def test_on_a_slowed_engine_the_live_estimate_is_within_a_quarter_of_the_actual() -> None:
    """The estimate before the run says 0.3 s (ten times too fast); from the run's own pace the
    expected total (elapsed + time left) is within 25% of the actual total at every event of
    the run's second half."""
    config = _config()
    pace = Pace(Expected(0.3, False, "a deliberately wrong guess"))
    work = QuestionWork(config, "fake")
    seen = []
    for event in run_question(config, QUESTION, FakeTask(), FakePool(SlowBackend("slow", STEP_S))):
        work.add(event)
        seen.append((pace.elapsed, pace.left(work.done, work.left)))
    actual = pace.elapsed
    assert actual > 10 * 0.3  # the guess was far off
    second_half = [(t, left) for t, left in seen if t >= actual / 2]
    assert len(second_half) > 20
    for t, left in second_half:
        assert abs(t + left - actual) <= 0.25 * actual, (t, left, actual)
    assert work.left == 0 and pace.left(work.done, work.left) == 0
    assert pace.summary().startswith(f"took {clock(actual)[:1]}")  # the actual beside the guess
    assert pace.summary().endswith("(expected about 0 s)")


def test_the_prior_counts_until_the_run_has_its_own_pace_then_only_that() -> None:
    now = [0.0]
    pace = Pace(Expected(100.0, False, "x"), now=lambda: now[0])
    assert pace.left(0, 10) == 100.0  # nothing done: the estimate
    assert pace.line(0, 10).endswith("(the estimate, before any work is done)")
    now[0] = 60.0  # a minute for a tenth of the work: the machine is six times slower
    assert pace.left(1, 9) == pytest.approx(540.0)
    assert pace.line(1, 9) == "about 9 min 00 s left (at this run's pace)"
    now[0] = 90.0  # no work finished for 30 s: the time left counts down, never below the pace
    assert pace.left(1, 9) == pytest.approx(max(540 - 30, 9 * 90))
    early = Pace(Expected(100.0, False, "x"), now=lambda: 2.0)
    early.started = 0.0
    blended = early.left(1, 99)  # 1% done after 2 s (own pace: 198 s left): mostly the estimate
    assert blended == pytest.approx(0.2 * 198 + 0.8 * 99)
    unknown = Pace(Expected(None, False, "nothing measured"))
    assert unknown.left(0, 5) is None and "once its first work is done" in unknown.line(0, 5)


def test_an_answer_expected_longer_than_written_keeps_its_logged_residual() -> None:
    work = QuestionWork(_config(max_tokens=100), "fake")
    work.lengths = {"MAJ": [(10, 1.0), (50, 1.0), (90, 1.0)], "RRMaj": []}
    assert work._row_left("MAJ", 0) == pytest.approx(50.0)
    assert work._row_left("MAJ", 20) == pytest.approx(70 - 20)  # longer than 20: 50 and 90
    assert work._row_left("MAJ", 95) == pytest.approx(2.5)  # past every logged one: halfway to L
    assert work._row_left("RRMaj", 30) == 70  # no lengths: to L


def test_every_offered_model_gets_a_time_or_says_how_it_would_be_measured() -> None:
    from rrdemo.backends.registry import REGISTRY

    for model in [*REGISTRY, "someone/unlisted-model"]:
        for backend in ("auto", "transformers"):
            expected = question_time(_config(model), "logic3", backend=backend)
            line = expected.line()
            assert line.startswith("**Expected time**: ") and expected.how in line
            if expected.seconds is None:
                assert "once it runs, the status line measures the time left" in line
                assert REGISTRY.get(model) is None or REGISTRY[model].size_gb is None
            else:
                assert expected.seconds > 0 and "on this machine" in line


def test_an_unmeasured_model_is_scaled_by_weight_size_from_the_nearest_measured_one() -> None:
    from rrdemo.rates import committed_rates

    rates = committed_rates()
    measured, how = speed_for(rates, "qwen2.5-coder-1.5b", "llamacpp", "MAJ", False, "end")
    assert how == ""
    scaled, how = speed_for(rates, "qwen2.5-coder-0.5b", "llamacpp", "MAJ", False, "end")
    assert "qwen2.5-coder-1.5b's measured speed scaled by weight size (0.99 / 3.09 GB)" in how
    assert scaled.per_token == pytest.approx(measured.per_token * 0.99 / 3.09)
    assert speed_for(rates, "someone/unlisted", "transformers", "MAJ", False, "end") == (None, "")


def test_a_sweeps_clock_weights_its_units_by_their_expected_time() -> None:
    from tests.support.fakes import fake_plan

    now = [0.0]
    sweep = SweepPace.of(fake_plan(("0c3t", "2c1t")))
    sweep.pace.now = lambda: now[0]
    sweep.pace.started = 0.0
    assert sweep.expected.seconds is None  # the scripted model has no measured speed
    assert sweep.split(0) == (0.0, 6.0) and sweep.split(2) == (2.0, 4.0)  # 1 each
    now[0] = 10.0
    assert sweep.line(2) == "about 20 s left (at this run's pace)"
    assert sweep.summary() == "took 10 s (expected none)"
