"""Ratios of measured times: undefined (None) where a time is zero or missing, never a
ZeroDivisionError; targets on an undefined ratio are undefined too."""

from __future__ import annotations


def ratio(a: float | None, b: float | None, digits: int = 3) -> float | None:
    """a / b rounded, or None (undefined) when either is missing or b is not positive: a wall
    time rounded to 0.000 (fake engines, a trivial run) has no meaningful ratio."""
    if a is None or b is None or b <= 0:
        return None
    return round(a / b, digits)


def at_least(value: float | None, bound: float) -> bool | None:
    """A target check that stays undefined (None) when its measurement is."""
    return None if value is None else value >= bound


def at_most(value: float | None, bound: float) -> bool | None:
    return None if value is None else value <= bound
