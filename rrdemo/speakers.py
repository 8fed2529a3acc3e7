"""Who speaks in a round-robin trajectory: before a run (who *can* write) and after (who *did*).

Before: `speaking_order` is the one place the RR speaking order of a trajectory is computed (the
protocol calls it too). A trajectory has at most ceil(L / K) turns (ceil(L / K_min) under an
adaptive turn policy), so only the first ceil(L / K)
agents of its order can ever write; `silent_agents` names the agents who can write in none of a
run's trajectories, and `silence_warning` says so in one sentence for the CLI, the experiment
planner and the Arena. The order a trajectory is written in is `trajectory_order`: the speaking
order reseated by the adversary strategy (e.g. `last-word`); the protocol and `silent_agents` both
use it.

After: who *did* write is part of the one fold of the event stream (`rrdemo.fold.SpeakerTally`);
`chunk_roles` reads it back from a logged trajectory. Pure functions, no I/O.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rrdemo.adversary import get_strategy
from rrdemo.config import RunConfig
from rrdemo.voting import derive_seed


# -- before a run: who can write --------------------------------------------------------------------
def speaking_order(config: RunConfig, question_id: str, trajectory: int) -> tuple[int, ...]:
    """The agent speaking order of RR trajectory `trajectory` of a question: seat order with
    `order="fixed"`, else a shuffle seeded by (seed, question, trajectory)."""
    order = tuple(range(config.n))
    if config.order == "shuffled":
        rng = random.Random(derive_seed(config.sampling.seed, "order", question_id, trajectory))
        order = tuple(rng.sample(order, config.n))
    return order


def trajectory_order(config: RunConfig, question_id: str, trajectory: int) -> tuple[int, ...]:
    """The order RR trajectory `trajectory` is written in: `speaking_order`, reseated by the
    config's adversary strategy (`static` and `contextual` keep it; `last-word` gives the last turn
    of a full-length trajectory to a corrupted agent)."""
    corrupted = tuple(i for i, agent in enumerate(config.agents) if agent.corrupted)
    order = speaking_order(config, question_id, trajectory)
    return get_strategy(config.adversary).order(order, corrupted, config)


def max_turns(config: RunConfig) -> int:
    """At most ceil(L / K) turns fit in a trajectory (fewer when a chunk ends at end-of-sequence).

    Under an adaptive turn policy (rrdemo.turns) a turn may stop at K_min tokens: ceil(L / K_min)
    is then an upper bound on the turns, not a promise."""
    return math.ceil(config.max_tokens / config.turn.shortest)


def possible_writers(config: RunConfig, order: Sequence[int]) -> tuple[int, ...]:
    """The agents of `order` who get a turn before the L budget runs out, in speaking order."""
    return tuple(order[: min(len(order), max_turns(config))])


@dataclass(frozen=True)
class Silence:
    """Which agents can never write in a run's RR trajectories, and why."""

    silent: tuple[int, ...]  # agents with no turn in any trajectory
    turns: int  # ceil(L / K): turns that fit in one trajectory
    trajectories: int  # trajectories looked at
    corrupted_only: int  # trajectories in which only corrupted agents can write

    @property
    def any(self) -> bool:
        return bool(self.silent) or self.corrupted_only > 0


def silent_agents(config: RunConfig, question_ids: Iterable[str] = ("",)) -> Silence:
    """The agents who cannot write in any RR trajectory of the given questions, in the order each
    trajectory is written (`trajectory_order`: the adversary strategy's reseating included).

    With the fixed order every trajectory is the same, so the answer does not depend on the
    question; with the shuffled order it is computed from the actual seeded orders.
    """
    qids = list(question_ids) or [""]
    if config.order == "fixed":  # every trajectory of every question has the same order
        qids = qids[:1]
    can_write: set[int] = set()
    corrupted_only = trajectories = 0
    for qid in qids:
        for j in range(config.resolved_m):
            writers = possible_writers(config, trajectory_order(config, qid, j))
            can_write.update(writers)
            trajectories += 1
            corrupted_only += config.t > 0 and all(config.agents[a].corrupted for a in writers)
    silent = tuple(a for a in range(config.n) if a not in can_write)
    return Silence(silent, max_turns(config), trajectories, corrupted_only)


def _role(config: RunConfig, agent: int) -> str:
    return "corrupted" if config.agents[agent].corrupted else "honest"


def silence_warning(config: RunConfig, question_ids: Iterable[str] = ("",)) -> str | None:
    """One sentence naming the agents that can never write, or None when everyone can."""
    s = silent_agents(config, question_ids)
    if not s.any:
        return None
    n, k, length = config.n, config.turn.shortest, config.max_tokens
    name = "K_min" if config.turn.adaptive else "K"
    why = (
        f"L = {length} allows only ceil(L/{name}) = {s.turns} turns of {name} = {k} tokens, "
        f"fewer than N = {n} (everyone speaks when L >= N x {name} = {n * k})"
    )
    parts = []
    if s.silent:
        named = ", ".join(f"agent {a} ({_role(config, a)})" for a in s.silent)
        parts.append(f"{named} can never write in an RR trajectory")
    if s.corrupted_only == s.trajectories:
        parts.append("only corrupted agents can write in every trajectory")
    elif s.corrupted_only:
        parts.append(
            f"in {s.corrupted_only} of {s.trajectories} trajectories only corrupted agents can write"
        )
    hint = "" if config.order == "shuffled" else "; --order shuffled gives every agent a chance"
    return f"{'; '.join(parts)}: {why}{hint}"


# -- after a run, from the log ---------------------------------------------------------------------
def chunk_roles(chunks: Iterable[dict]) -> set[str]:
    """The roles ("corrupted" / "honest") that wrote a logged trajectory's chunks (token > 0)."""
    return {c["role"] for c in chunks if c.get("n_tokens", 1) > 0 and c.get("role")}
