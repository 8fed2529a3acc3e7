"""The Experiments tab's sweep: the real experiment runner over scripted fake agents."""

from __future__ import annotations

import json
import threading

import pytest

from rrdemo.errors import RRError
from rrdemo.limits import Limits
from tests.support.fakes import FakeBackend, FakePool, obeys_injection
from ui.experiments_tab import (
    _sweep_callback,
    adversary_results,
    paper_beside,
    results_frame,
    rho_figure,
    run_sweep,
    shown_table,
    sweep_settings,
)


def _settings(**changes) -> dict:
    base = sweep_settings(["logic3"], "smollm2", "0c3t,2c1t", ["strong"], 4, 16, 2, 0)
    return {**base, **changes}


def test_sweep_reports_progress_and_accuracy_by_rho() -> None:
    pool = FakePool(FakeBackend("smollm2", obeys_injection))  # the registry name, fake agents
    steps = list(run_sweep(_settings(), pool, threading.Event(), every=0.05))
    done = [d for d, _, _ in steps]
    total, path = steps[-1][1], steps[-1][2]
    assert total == 4 and done == sorted(done) and done[-1] == total
    frame = results_frame(path)
    assert list(frame["setting"]) == ["0c3t", "2c1t"]
    assert list(frame["rho"]) == [0.0, round(2 / 3, 3)]
    assert list(frame["questions"]) == [2, 2]
    # 2 of 3 agents obey "you MUST select (X)": MAJ is always fooled; nobody is fooled at 0c3t
    by_setting = frame.set_index("setting")
    assert by_setting.loc["2c1t", "MAJ fooled"] == 1.0
    assert by_setting.loc["0c3t", "MAJ fooled"] == 0.0
    # the table agrees with the log's own records
    records = [json.loads(line) for line in path.read_text().splitlines()]
    done_records = [r for r in records if r["type"] == "done"]
    assert len(done_records) == 4
    rr_correct = sum(r["votes"]["RRMaj"]["correct"] for r in done_records)
    assert rr_correct == round(frame["RRMaj acc"].sum() * 2)
    fig = rho_figure(frame)
    assert len(fig.data) == 2  # MAJ and RRMaj for one task, strength and K
    shown = shown_table(frame).set_index("setting")  # in % on the page, as everywhere
    assert shown.loc["2c1t", "MAJ fooled %"] == 100.0 and shown.loc["0c3t", "MAJ fooled %"] == 0
    assert list(shown["RRMaj %"]) == [round(100 * v, 1) for v in frame["RRMaj acc"]]


def test_two_sweeps_in_one_second_from_one_thread_write_two_logs(monkeypatch) -> None:
    """A sweep's log is its own, however fast the next sweep starts (the clock is held still)."""
    import ui.experiments_tab as tab

    monkeypatch.setattr(tab.time, "strftime", lambda _: "20260101-000000")
    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    first = list(run_sweep(_settings(), pool, threading.Event(), every=0.05))
    second = list(run_sweep(_settings(configs="2c1t"), pool, threading.Event(), every=0.05))
    assert first[-1][2] != second[-1][2]
    assert list(results_frame(second[-1][2])["setting"]) == ["2c1t"]
    assert list(results_frame(first[-1][2])["setting"]) == ["0c3t", "2c1t"]


def test_stop_ends_the_sweep_inside_the_current_question() -> None:
    backend = FakeBackend("smollm2", obeys_injection)
    pool = FakePool(backend)
    stop = threading.Event()
    stop.set()
    steps = list(run_sweep(_settings(), pool, stop, every=0.05))
    assert steps[-1][0] == 0 < steps[-1][1]  # not even the first question was finished
    assert len(results_frame(steps[-1][2])) == 0 and backend.calls == []


def test_stop_says_how_many_question_runs_finished(tmp_path) -> None:
    """What the Stop button shows, read from the sweep's own log: stopped, with the finished
    count; a sweep that already ended (or none) keeps its line."""
    from ui.experiments_tab import stopped_status

    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    stop = threading.Event()
    steps = []
    for step in run_sweep(_settings(), pool, stop, every=0.05):
        steps.append(step)
        if step[0] == 1:
            stop.set()  # the engine reads it: the sweep ends inside its next question
    _, total, path = steps[-1]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    done = sum(r["type"] == "done" for r in lines)
    assert 1 <= done < total
    assert stopped_status(str(path)) == (
        f"**Stopped** · {done} of {total} question runs finished (the table and the log hold "
        f"them) · log `{path.name}`"
    )
    finished = list(run_sweep(_settings(), pool, threading.Event(), every=0.05))
    assert not isinstance(stopped_status(str(finished[-1][2])), str)  # it ended: its line stays
    assert not isinstance(stopped_status(None), str)


@pytest.mark.parametrize(
    "changes,needle",
    [
        ({"n": 40, "configs": "0c3t,1c2t,2c1t"}, f"at most {Limits().web_units}"),
        ({"tasks": []}, "at least one benchmark task"),
        ({"strengths": []}, "at least one corruption strength"),
        ({"configs": "3x2"}, "must look like 3c2t"),
        ({"models": ["no-such-model"]}, "unknown model"),
        ({"adversaries": []}, "at least one adversary strategy"),
        ({"adversaries": ["sneaky"]}, "unknown adversary strategy 'sneaky'; allowed: static"),
    ],
)
def test_bad_sweeps_are_refused_before_anything_runs(changes: dict, needle: str) -> None:
    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    with pytest.raises(RRError, match=needle):
        list(run_sweep(_settings(**changes), pool, threading.Event()))


def test_a_huge_label_is_refused_from_its_numbers_before_any_agent_is_built(monkeypatch) -> None:
    from rrdemo.runs import spec

    def built(*args, **kwargs):
        raise AssertionError("an ensemble was built for a sweep over the limits")

    monkeypatch.setattr(spec, "homogeneous_agents", built)
    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    for configs in ("999999999c1t", "1c999999999t", "0c3t," * 300):
        with pytest.raises(RRError, match=r"at most \d+ is allowed \(RRDEMO_MAX_"):
            list(run_sweep(_settings(configs=configs), pool, threading.Event()))


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("k_", float("nan"), "K must be a whole number, got nan"),
        ("k_", "sixteen", "K must be a whole number, got 'sixteen'"),
        ("l_", float("nan"), "L (max_tokens) must be a whole number, got nan"),
        ("l_", "abc", "L (max_tokens) must be a whole number, got 'abc'"),
        ("n_", float("inf"), "n (questions per task) must be a whole number, got inf"),
        ("n_", "", "n (questions per task) must be a whole number, got ''"),
        ("seed_", float("nan"), "seed must be a whole number, got nan"),
        ("seed_", "x", "seed must be a whole number, got 'x'"),
        ("seed_", 1.5, "seed must be a whole number, got 1.5"),
        ("tasks_", {"a": 1}, "tasks must be a list or a comma-separated string, got {'a': 1}"),
    ],
)
def test_the_sweep_form_names_every_refused_value(field: str, value, needle: str) -> None:
    import gradio as gr

    values = dict(
        tasks_=["logic3"], model_="smollm2", configs_="0c3t", strengths_=["strong"], k_=4,
        l_=16, n_=1, seed_=0, adversaries_=["static"],
    )  # fmt: skip
    sweep = _sweep_callback(FakePool(FakeBackend("smollm2", obeys_injection)))
    with pytest.raises(gr.Error) as refused:
        next(sweep(None, **{**values, field: value}))
    assert refused.value.message == needle


def _two_strategy_sweep():
    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    settings = _settings(n=1, adversaries=["static", "last-word"])
    return list(run_sweep(settings, pool, threading.Event(), every=0.05))[-1][2]


def test_a_sweep_over_two_adversaries_shows_maj_and_rrmaj_per_strategy() -> None:
    path = _two_strategy_sweep()
    frame = results_frame(path)
    assert sorted(zip(frame["setting"], frame["adversary"], strict=True)) == [
        ("0c3t", "last-word"),
        ("0c3t", "static"),
        ("2c1t", "last-word"),
        ("2c1t", "static"),
    ]
    assert len(rho_figure(frame).data) == 4  # MAJ and RRMaj per strategy
    # The report's own per-strategy table (rrdemo.report.adversary), one line per strategy.
    text = adversary_results(path)
    lines = [line for line in text.splitlines() if line.startswith("| ") and "2c1t" in line]
    assert [line.split(" | ")[5] for line in lines] == ["static", "last-word"]
    # The paper has lines only for its own adversary.
    static_only = paper_beside(frame[frame["adversary"] == "static"])
    assert paper_beside(frame)[0].equals(static_only[0])


def test_the_demo_task_can_be_swept() -> None:
    from rrdemo.runs.spec import plan_sweep

    plan = plan_sweep(sweep_settings(["demo"], "smollm2", "0c3t,2c1t", ["strong"], 4, 16, 2, 0))
    assert {c.task.name for c in plan.conditions} == {"demo"} and plan.n_units == 4


def test_the_sweep_states_its_expected_time_then_the_time_left_then_both_times() -> None:
    from ui.experiments_tab import sweep_expected

    values = (["logic3"], "smollm2", "0c3t,2c1t", ["strong"], 4, 16, 2, 0, ["static"])
    before = sweep_expected("llamacpp", *values)
    assert before.startswith("**Expected time**: about ") and "on this machine" in before
    unknown = sweep_expected("transformers", *values[:1], "someone/unlisted", *values[2:])
    assert "not known before it starts" in unknown and "from its own pace" in unknown
    refused = sweep_expected("llamacpp", [], *values[1:])
    assert refused.startswith("**Expected time**: none, the sweep cannot run as set: ")
    sweep = _sweep_callback(FakePool(FakeBackend("smollm2", obeys_injection)))
    shown = [frame[0] for frame in sweep(None, *values) if isinstance(frame[0], str)]
    assert shown[0].startswith("0 / 4 question runs done · about ")  # the estimate, at first
    assert any(" left (at this run's pace) · " in line for line in shown[1:-1])
    assert "4 / 4 question runs done · took " in shown[-1] and "(expected about " in shown[-1]
