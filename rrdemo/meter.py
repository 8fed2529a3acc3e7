"""The truth meter: an observable stand-in for the projection z_t of the paper's theory.

Appendix B tracks the potential V(h_t) = ln(1 + exp(-z_t)), z_t the projection of the shared
state on a truth direction. After each RR turn the meter asks a reader, an agent's own prompt
followed by the shared text so far and the cue "\\nThe answer is", how likely it would continue
with the gold answer and with the target (the option letters after " (", or the teacher-forced
numbers, e.g. " 42." against " 45."), and reports z = logit(p_gold) - logit(p_target). It does
so for an honest reader (the first honest seat's prompt) and a corrupted one (the first
corrupted seat's, injection included). MAJ answers, written in one turn each, are read at the
same token counts (every K tokens). The meter watches a method's event stream (`MeterObserver`,
an `rrdemo.events.Observer`) and reads when the protocol says a turn is written. A reading runs on cached cells: in RR those of the next
writer with the reader's prompt, who must read the same text at its turn anyway; so the meter
adds little more than the cue. docs/theory.md turns the readings into gamma_H and delta.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from rrdemo.agents import Agent
from rrdemo.backends.base import ScoreRequest
from rrdemo.config import RunConfig
from rrdemo.events import ChunkWritten, Event, Method, Observer, TrajectoryStarted, TurnMeasured
from rrdemo.tasks.base import Question, Task

CUE = "\nThe answer is"  # read after the text; the candidates follow it
_P_FLOOR = 1e-12  # keeps logit(p) finite for p rounding to 0 or 1


def logit(p: float) -> float:
    p = min(max(p, _P_FLOOR), 1 - _P_FLOOR)
    return math.log(p) - math.log1p(-p)


def reading(logp_gold: float, logp_target: float) -> dict[str, float]:
    """p_gold, p_target and z = logit(p_gold) - logit(p_target) from two log-probabilities."""
    p_gold, p_target = math.exp(logp_gold), math.exp(logp_target)
    return {
        "p_gold": round(p_gold, 6),
        "p_target": round(p_target, 6),
        "z": round(logit(p_gold) - logit(p_target), 4),
    }


def potential(z: float) -> float:
    """The paper's V = ln(1 + exp(-z)), computed without overflow."""
    return max(-z, 0.0) + math.log1p(math.exp(-abs(z)))


@dataclass(frozen=True)
class Place:
    """Where a reading is taken: trajectory, turn, who wrote that turn, and the text so far."""

    trajectory: int
    turn: int
    agent: Agent | None
    n_tokens: int
    text: str
    order: tuple[int, ...] = ()  # RR: the trajectory's speaking order


def cue_and_candidates(task: Task, gold: str, target: str) -> tuple[str, tuple[str, str]]:
    """The cue and how it continues with the gold answer and with the target. Options: the cue
    opens the parenthesis and the candidates are the letters, read off one next-token
    distribution. Anything else: the answers in full and closed (" 42." against " 45.", so
    that " 4" and " 42" are different events)."""
    if task.kind == "letter":
        letters = tuple(task.format_target(a).strip().strip("()") for a in (gold, target))
        return CUE + " (", letters  # type: ignore[return-value]
    return CUE, (f" {task.format_target(gold)}.", f" {task.format_target(target)}.")


@dataclass(frozen=True)
class Meter:
    """Readers and candidates of one method's run on one question."""

    method: Method
    readers: dict[str, Agent]  # role -> the agent whose prompt reads
    cue: str  # read after the text
    candidates: tuple[str, str]  # the gold answer and the target, as the cue continues them
    key: tuple  # (run id, "meter", question id, method): the readers' cache keys extend it
    agents: tuple[Agent, ...] = ()
    # RR: the cache key of (trajectory, agent) in generation. A reading then extends the cache
    # of the next writer that reads the same prompt with the same model, who would have to
    # read the same text at its turn anyway.
    writer_key: Callable[[int, int], tuple] | None = None

    @classmethod
    def for_run(
        cls,
        method: Method,
        agents: Sequence[Agent],
        task: Task,
        question: Question,
        target: str | None,
        seed: int,
        run_id: str,
        writer_key: Callable[[int, int], tuple] | None = None,
    ) -> Meter | None:
        """The meter of a run; None when the gold answer is unknown. Without corrupted agents
        the target is the distractor they would have been given."""
        if question.gold is None:
            return None
        target = target or task.distractor(question, seed)
        readers = {}
        for role, corrupted in (("honest", False), ("corrupted", True)):
            agent = next((a for a in agents if a.corrupted == corrupted), None)
            if agent is not None:
                readers[role] = agent
        cue, candidates = cue_and_candidates(task, question.gold, target)
        key = (run_id, "meter", question.qid, method)
        return cls(method, readers, cue, candidates, key, tuple(agents), writer_key)

    def _key(self, place: Place, role: str) -> tuple:
        reader = self.readers[role]
        n = len(place.order)
        for step in range(1, n + 1) if self.writer_key is not None else ():
            agent = self.agents[place.order[(place.turn + step) % n]]
            same = agent.corrupted == reader.corrupted and agent.backend is reader.backend
            if same and agent.prompt == reader.prompt:
                return self.writer_key(place.trajectory, agent.index)
        return (*self.key, place.trajectory, role)

    def read(self, places: Sequence[Place]) -> Iterator[TurnMeasured]:
        """One TurnMeasured per place; all the readings a backend takes go to it as one call."""
        by_backend: dict[int, list[tuple[str, int]]] = {}
        for role, agent in self.readers.items():
            by_backend.setdefault(id(agent.backend), []).extend(
                (role, i) for i in range(len(places))
            )
        found: dict[tuple[str, int], tuple[float, ...]] = {}
        for items in by_backend.values():
            backend = self.readers[items[0][0]].backend
            requests = [
                ScoreRequest(
                    self._key(places[i], role),
                    self.readers[role].prompt + places[i].text,
                    self.cue,
                    self.candidates,
                    group=self.key[0],
                )
                for role, i in items
            ]
            found.update(zip(items, backend.score(requests), strict=True))
        for i, place in enumerate(places):
            writer = place.agent
            yield TurnMeasured(
                self.method,
                place.trajectory,
                place.turn,
                writer.index if writer is not None else None,
                writer.corrupted if writer is not None else None,
                place.n_tokens,
                {role: reading(*found[role, i]) for role in self.readers},
            )

    def opening(
        self, trajectories: Sequence[int], orders: Sequence[tuple[int, ...]] = ()
    ) -> Iterator[TurnMeasured]:
        """The reading before anything is written (turn -1), for each trajectory."""
        orders = orders or [()] * len(trajectories)
        yield from self.read(
            [Place(j, -1, None, 0, "", o) for j, o in zip(trajectories, orders, strict=True)]
        )

    def answers(
        self, answers: Sequence[tuple[int, Agent, str]], every: int
    ) -> Iterator[TurnMeasured]:
        """MAJ: each (answer index, writer, text) read after every `every` tokens of its
        writer's tokenizer and at its end; cut r of all answers is read in one call."""
        cuts = [
            [(n, text) for n, text in agent.backend.prefixes(text, every)]
            for _, agent, text in answers
        ]
        for r in range(max((len(c) for c in cuts), default=0)):
            places = [
                Place(j, r, agent, *cuts[i][r])
                for i, (j, agent, _) in enumerate(answers)
                if r < len(cuts[i])
            ]
            yield from self.read(places)


class MeterObserver(Observer):
    """The meter of one method's run as an observer of its events: it follows each trajectory's
    speaking order and text from `TrajectoryStarted` and `ChunkWritten`, and reads when a turn
    is written: before anything (turn -1), after each RR turn the trajectories that turn wrote
    in, and MAJ's answers (written in one turn) at RR's turn lengths."""

    def __init__(self, meter: Meter, every: int) -> None:
        self.meter = meter
        self.every = every  # K: MAJ answers are read every K tokens
        self.orders: dict[int, tuple[int, ...]] = {}
        self.texts: dict[int, str] = {}
        self.tokens: dict[int, int] = {}
        self.written: list[ChunkWritten] = []  # the chunks of the turn being written

    def watch(self, events: Iterator[Event]) -> Iterator[Event]:
        for event in events:
            if isinstance(event, TrajectoryStarted):
                self.orders[event.trajectory] = event.order
            elif isinstance(event, ChunkWritten):
                self.written.append(event)
                j = event.trajectory
                self.texts[j] = self.texts.get(j, "") + event.text
                self.tokens[j] = self.tokens.get(j, 0) + event.n_tokens
            yield event

    def after_turn(self, turn: int) -> Iterator[TurnMeasured]:
        meter, agents = self.meter, self.meter.agents
        chunks = sorted(self.written, key=lambda c: c.trajectory)
        self.written = []
        rr = meter.method == "RRMaj"
        if turn < 0:
            trajectories = sorted(self.orders)
            yield from meter.opening(
                trajectories, [self.orders[j] for j in trajectories] if rr else ()
            )
        elif rr:
            places = [
                Place(
                    c.trajectory,
                    turn,
                    agents[c.agent],
                    self.tokens[c.trajectory],
                    self.texts[c.trajectory],
                    self.orders[c.trajectory],
                )
                for c in chunks
            ]
            yield from meter.read(places)
        else:
            yield from meter.answers(
                [(c.trajectory, agents[c.agent], c.text) for c in chunks], self.every
            )


def observer_for(
    method: Method,
    agents: Sequence[Agent],
    task: Task,
    question: Question,
    config: RunConfig,
    target: str | None,
    run_id: str,
) -> Observer:
    """What watches a method's run: the truth meter when the config turns it on and the gold
    is known, else nothing (a plain `Observer`)."""
    if not config.meter:
        return Observer()
    # RR readings extend the caches of the agents who read the same text next (`Meter._key`).
    writer_key = (lambda j, a: (run_id, method, question.qid, j, a)) if method == "RRMaj" else None
    seed = config.sampling.seed
    meter = Meter.for_run(method, agents, task, question, target, seed, run_id, writer_key)
    return Observer() if meter is None else MeterObserver(meter, config.k)
