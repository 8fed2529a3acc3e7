"""Events back from their JSON lines, so tests can check that `to_dict()` loses nothing."""

from __future__ import annotations

from dataclasses import fields

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

EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (
        RunStarted,
        TrajectoryStarted,
        TokenDelta,
        ChunkWritten,
        TurnMeasured,
        AnswerExtracted,
        Vote,
        Decision,
        ComputeUsed,
    )
}


def event_from_dict(data: dict) -> Event:
    """Rebuild an event from `to_dict()` output (JSON lists become tuples where the type says so)."""
    cls = EVENT_TYPES[data["kind"]]
    kwargs = {}
    for f in fields(cls):
        if f.name in data:
            value = data[f.name]
            if isinstance(value, list) and "tuple" in str(f.type):
                value = tuple(value)
            kwargs[f.name] = value
    return cls(**kwargs)
