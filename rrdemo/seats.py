"""Seats of an ensemble from what people type: `3c2t` labels, homogeneous ensembles, agent lists
("smollm2, c, qwen*") and corrupted-seat numbers. Every count is checked against the limits table
before any seat is built."""

from __future__ import annotations

import re
from dataclasses import replace

from rrdemo.config import AgentSpec
from rrdemo.errors import RRError
from rrdemo.limits import ENV as LIMIT_ENV
from rrdemo.limits import limits

_CT = re.compile(r"^\s*(\d+)\s*c\s*(\d+)\s*t\s*$", re.IGNORECASE)


def parse_ct(label: str) -> tuple[int, int]:
    """`"3c2t"` -> (3, 2)."""
    match = _CT.match(label)
    if not match:
        raise RRError(
            f"corruption setting must look like 3c2t (c corrupted, t honest), got {label!r}"
        )
    return int(match.group(1)), int(match.group(2))


def homogeneous_agents(
    model: str | list[str],
    n: int,
    c: int,
    corrupted_first: bool = True,
    revision: str | None = None,
) -> tuple[AgentSpec, ...]:
    """N agents of one model (or a cycle of models), c of them corrupted.

    Corrupted agents take the first seats by default, so with the fixed order a corrupted agent
    opens every RR trajectory: the harder case for RR. Pass `corrupted_first=False` for the last seats.
    """
    if n < 1:
        raise RRError(f"N must be at least 1 agent, got {n}")
    limits().check("agents", n, "N (agents)")
    if not 0 <= c <= n:
        raise RRError(f"c (corrupted agents) must be between 0 and N={n}, got {c}")
    models = [model] if isinstance(model, str) else list(model)
    if not models:
        raise RRError("at least one model is needed")
    seats = range(c) if corrupted_first else range(n - c, n)
    return tuple(
        AgentSpec(model=models[i % len(models)], corrupted=i in seats, revision=revision)
        for i in range(n)
    )


# Role words an agent list accepts after a model, and whether each means corrupted.
ROLES: dict[str, bool] = {
    "corrupted": True,
    "c": True,
    "adversarial": True,
    "honest": False,
    "h": False,
    "t": False,
}


def parse_agents(text: str) -> tuple[AgentSpec, ...]:
    """Agents in seat order from the one agent-list syntax every front end uses.

    Agents are separated by commas or new lines; each is a model name, marked corrupted by a
    trailing `*` or by a role word after it (`smollm2, corrupted`, `smollm2, c`; honest by
    default); `#` starts a comment. So `"smollm2*, gemma3-270m"` and the lines
    `"smollm2, c"` / `"gemma3-270m, honest"` are the same ensemble.
    """
    specs: list[AgentSpec] = []
    most = limits().agents
    for number, raw in enumerate((text or "").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"agents line {number} ({raw.strip()!r})"
        roled = True  # whether the last agent on this line already has its role
        for part in (p.strip() for p in line.split(",")):
            role = ROLES.get(part.lower())
            if role is not None:
                if roled:
                    raise RRError(f"{where}: the role {part!r} must follow a model name")
                specs[-1] = replace(specs[-1], corrupted=role)
                roled = True
            elif part.rstrip("*"):
                if len(specs) == most:  # refused before the list grows past the limit
                    raise RRError(
                        f"the agent list has more than {most} agents; at most {most} is "
                        f"allowed ({LIMIT_ENV['agents']})"
                    )
                specs.append(AgentSpec(model=part.rstrip("*"), corrupted=part.endswith("*")))
                roled = part.endswith("*")
            else:
                raise RRError(
                    f"{where}: empty agent; write '<model>, honest|corrupted' per line, or "
                    "models separated by commas with a trailing * for corrupted ones"
                )
    if not specs:
        raise RRError(
            "the agent list is empty: write one agent per line, e.g. 'smollm2, corrupted'"
        )
    return tuple(specs)


def with_corrupted_seats(agents: tuple[AgentSpec, ...], seats: str) -> tuple[AgentSpec, ...]:
    """The same agents with exactly the seats listed in `seats` (`"0,2,4"`) corrupted."""
    try:
        chosen = {int(s) for s in seats.split(",") if s.strip()}
    except ValueError:
        raise RRError(f"corrupted seats must be seat numbers like 0,2,4, got {seats!r}") from None
    if not chosen <= set(range(len(agents))):
        raise RRError(f"corrupted seats must be between 0 and {len(agents) - 1}")
    return tuple(replace(a, corrupted=i in chosen) for i, a in enumerate(agents))
