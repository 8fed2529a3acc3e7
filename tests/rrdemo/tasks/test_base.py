"""What the engine needs from a benchmark: a question (compared without its metadata) and the
`Task` protocol every task of the registry satisfies."""

from __future__ import annotations

import dataclasses

import pytest

from rrdemo.tasks import DEMO_TASK, TASK_NAMES, get_task
from rrdemo.tasks.base import Question, Task
from tests.support.fakes import FakeTask


def test_questions_are_frozen_and_compared_without_their_metadata():
    one = Question("gsm8k", "gsm8k-0001", "2+2?", gold="4", meta={"source": "a"})
    other = Question("gsm8k", "gsm8k-0001", "2+2?", gold="4", meta={"source": "b"})
    assert one == other and hash(one) == hash(other) and len({one, other}) == 1
    assert one != dataclasses.replace(one, gold="5")
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.gold = "5"
    assert Question("x", "x-0", "?").options == ()


@pytest.mark.parametrize("name", [*TASK_NAMES, DEMO_TASK, "custom"])
def test_every_registered_task_is_a_task(name):
    task = get_task(name)
    assert isinstance(task, Task)
    assert task.kind in ("letter", "number", "math") and task.name and task.title


def test_something_lacking_a_part_of_the_protocol_is_not_a_task():
    assert not isinstance(FakeTask(), Task)  # the scripted stand-in has no title
    assert not isinstance(object(), Task)
