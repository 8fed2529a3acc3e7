"""The task choices of the Arena and the Experiments tab: the engine's names as values, our demo
task labelled as ours."""

from __future__ import annotations

from rrdemo.tasks import DEMO_TASK, TASK_NAMES, get_task
from ui.choices import DEMO_LABEL, SWEEP_TASK_CHOICES


def test_the_values_are_the_papers_benchmarks_then_the_demo_task_then_the_generated_ones():
    generated = [f"arith{s}" for s in range(1, 13)]
    assert [value for _, value in SWEEP_TASK_CHOICES] == [*TASK_NAMES, DEMO_TASK, *generated]
    for _, value in SWEEP_TASK_CHOICES:
        assert get_task(value).name == value  # every value is a task the engine runs


def test_the_demo_task_is_labelled_as_ours_and_the_benchmarks_by_their_names():
    labels = {value: label for label, value in SWEEP_TASK_CHOICES}
    assert labels[DEMO_TASK] == DEMO_LABEL != DEMO_TASK
    assert "not the paper" in DEMO_LABEL
    assert all(labels[name] == name for name in TASK_NAMES)
    assert "generated, beyond the paper" in labels["arith2"]  # the evidence run's task
