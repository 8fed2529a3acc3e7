"""The limits on every size a visitor, a command line or a file can name, in one table.

Each size is compared with its limit before anything of that size is built, loaded or allocated:
a `999999999c1t` label is refused from its two integers, never by building its agents. The web app
and the command line check the same table; an operator raises or lowers a limit with its
environment variable, read when `limits()` is called (never at import). docs/security.md lists
every limit with its default and variable (a test keeps that table and this one in step).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from rrdemo.errors import RRError

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class Limits:
    """The largest size of each thing a run or a sweep is made of; defaults fit the paper's sweeps."""

    agents: int = 64  # N: agents of one ensemble (c + t of a `3c2t` label, seats of a file)
    trajectories: int = 256  # M: RR trajectories voted by RRMaj (a sweep's M*, its pool size)
    tokens: int = 32768  # L: new tokens per trajectory or answer (K, tokens per turn, is at most L)
    questions: int = 10_000  # n: questions per task in a sweep
    configs: int = 256  # `3c2t` labels plus explicit ensembles in one sweep
    sweep_values: int = 32  # entries of each other list of a sweep: tasks, models, strengths, K ...
    conditions: int = 10_000  # conditions of one sweep (tasks x ensembles x strengths x K x ...)
    units: int = 1_000_000  # (condition, question) units of one sweep
    web_units: int = 48  # units of one sweep started from the web app (bigger ones: the CLI)
    question_chars: int = 20_000  # characters of a typed question or of its correct answer
    template_chars: int = 2_000  # characters of a custom injection template

    def check(self, name: str, value: int, what: str) -> None:
        """RRError naming `what`, its size and the limit (with its variable) when `value` is over
        the limit `name`."""
        limit = getattr(self, name)
        if value > limit:
            raise RRError(f"{what} is {value}; at most {limit} is allowed ({ENV[name]})")


# The environment variable of each limit.
ENV: dict[str, str] = {f.name: f"RRDEMO_MAX_{f.name.upper()}" for f in fields(Limits)}


def limits() -> Limits:
    """The limits in force: each variable of `ENV` that is set, else the default."""
    given = {}
    for name, variable in ENV.items():
        text = os.environ.get(variable, "").strip()
        if text:
            if not text.isdigit() or int(text) < 1:
                raise RRError(f"{variable} must be a whole number of at least 1, got {text!r}")
            given[name] = int(text)
    return Limits(**given)


# ---------------------------------------------------------------------------------------------
# Memory: the product of the sizes above, checked before a run builds anything
# ---------------------------------------------------------------------------------------------
