"""The event stream's types: one `kind` each, JSON dicts out and the same events back in."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from rrdemo import events as events_module
from rrdemo.events import (
    AnswerExtracted,
    ChunkWritten,
    ComputeUsed,
    Decision,
    Event,
    RunStarted,
    TokenDelta,
    TrajectoryStarted,
    TurnMeasured,
    Vote,
)
from tests.support.events import event_from_dict

ONE_OF_EACH = (
    RunStarted("MAJ", {"k": 4}, "abc123", "q-1", "Which?", "(B)", "(C)"),
    TrajectoryStarted("RRMaj", 2, (1, 0, 2)),
    TokenDelta("RRMaj", 2, 0, 1, False, "The"),
    ChunkWritten("RRMaj", 2, 0, 1, False, "m", "The answer", 2),
    TurnMeasured("RRMaj", 2, 0, 1, False, 2, {"honest": {"p_gold": 0.5, "p_target": 0.2}}),
    AnswerExtracted("MAJ", 0, "(B)", True, False, 0, True, 9, "eos", "... is (B).", "(B)"),
    Vote("MAJ", {"(B)": 2, "(C)": 1}, 1),
    Decision("RRMaj", "(B)", True, False, ("(B)", "(C)"), "(B)"),
    ComputeUsed("MAJ", 30, 12, 0.25, {"0": {"decode": 10, "prefill": 4}}),
)


def test_every_event_type_has_its_own_kind():
    defined = {
        cls
        for _, cls in inspect.getmembers(events_module, inspect.isclass)
        if issubclass(cls, Event) and cls is not Event
    }
    assert defined == {type(e) for e in ONE_OF_EACH}
    assert len({cls.kind for cls in defined}) == len(defined)


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda e: e.kind)
def test_an_event_goes_through_json_and_comes_back_equal(event):
    data = event.to_dict()
    assert data["kind"] == event.kind
    assert set(data) == {"kind", *(f.name for f in dataclasses.fields(event))}
    assert event_from_dict(json.loads(json.dumps(data))) == event


def test_events_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        ONE_OF_EACH[0].question = "changed"
