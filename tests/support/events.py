"""Events back from their JSON lines, so tests can check that `to_dict()` loses nothing."""

from __future__ import annotations

from dataclasses import fields

from rrdemo.events import Event


def event_from_dict(data: dict) -> Event:
    """Rebuild an event from `to_dict()` output (JSON lists become tuples where the type says so)."""
    cls = next(c for c in Event.__subclasses__() if c.kind == data["kind"])
    kwargs = {}
    for f in fields(cls):
        if f.name in data:
            value = data[f.name]
            if isinstance(value, list) and "tuple" in str(f.type):
                value = tuple(value)
            kwargs[f.name] = value
    return cls(**kwargs)
