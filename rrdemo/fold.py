"""The one fold of the event stream: what a run has shown so far, trajectory by trajectory.

The protocols yield events (rrdemo.events); every front end folds them into the same records.
`Fold.apply(event)` takes one event at a time (the Arena calls it as tokens arrive, the CLI as it
prints, the experiment logger as it writes) and `fold(events)` applies a whole stream. Per method
(MAJ, RRMaj) a `MethodRecord` keeps

- each `FoldedTrajectory` (an RR trajectory, or one agent's independent MAJ answer, as the events
  showed it; `rrdemo.protocols.Trajectory` is the text being written): its speaking order, every
  `FoldedChunk` (who wrote it, honest or corrupted, with which model, the text, its token count;
  a chunk still being written grows with each `TokenDelta`) and the extracted answer;
- the vote, the decision and the compute the method used, as the events that reported them;

and over the RRMaj trajectories a `SpeakerTally`: the tokens each agent and each role wrote, and
which trajectories are *mixed* (an honest and a corrupted agent both wrote part of them).
The app's API reads its records from here (`MethodRecord.summary`); the run log builds its
records from these objects (`rrdemo.runs.record`). Pure, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

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


# -- who wrote: tokens per agent and per role ------------------------------------------------------
@dataclass
class TrajectorySpeakers:
    """Tokens each agent (and each role) wrote in one RR trajectory."""

    index: int
    tokens: dict[int, int] = field(default_factory=dict)  # agent -> tokens written
    corrupted: dict[int, bool] = field(default_factory=dict)  # agent -> role
    order: list[int] = field(default_factory=list)  # agents in the order they first wrote

    def add(self, agent: int, corrupted: bool, n_tokens: int) -> None:
        if n_tokens <= 0:  # a chunk that ended at once (end-of-sequence) wrote nothing
            return
        if agent not in self.tokens:
            self.order.append(agent)
        self.tokens[agent] = self.tokens.get(agent, 0) + n_tokens
        self.corrupted[agent] = corrupted

    @property
    def total(self) -> int:
        return sum(self.tokens.values())

    @property
    def honest_tokens(self) -> int:
        return sum(t for a, t in self.tokens.items() if not self.corrupted[a])

    @property
    def corrupted_tokens(self) -> int:
        return sum(t for a, t in self.tokens.items() if self.corrupted[a])

    @property
    def honest_wrote(self) -> bool:
        return any(not self.corrupted[a] for a in self.tokens)

    @property
    def corrupted_wrote(self) -> bool:
        return any(self.corrupted[a] for a in self.tokens)

    @property
    def mixed(self) -> bool:
        """Both an honest and a corrupted agent wrote part of the trajectory."""
        return self.honest_wrote and self.corrupted_wrote

    @property
    def kind(self) -> str:
        """ "mixed", "honest only" or "corrupted only" (also when nobody wrote a token)."""
        if self.mixed:
            return "mixed"
        return "honest only" if self.honest_wrote else "corrupted only"

    def share(self, agent: int) -> float:
        return self.tokens.get(agent, 0) / self.total if self.total else 0.0

    def to_dict(self) -> dict:
        return {
            "trajectory": self.index,
            "tokens": {str(a): self.tokens[a] for a in self.order},
            "honest_tokens": self.honest_tokens,
            "corrupted_tokens": self.corrupted_tokens,
            "mixed": self.mixed,
        }


@dataclass
class SpeakerTally:
    """Who wrote each RRMaj trajectory (its finished chunks); feed it any events."""

    trajectories: dict[int, TrajectorySpeakers] = field(default_factory=dict)

    def add(self, event: Event) -> None:
        if isinstance(event, ChunkWritten) and event.method == "RRMaj":
            tr = self.trajectories.setdefault(
                event.trajectory, TrajectorySpeakers(event.trajectory)
            )
            tr.add(event.agent, event.corrupted, event.n_tokens)

    @property
    def with_honest(self) -> int:
        return sum(tr.honest_wrote for tr in self.trajectories.values())

    @property
    def mixed(self) -> int:
        return sum(tr.mixed for tr in self.trajectories.values())

    @property
    def honest_only(self) -> int:
        return sum(tr.honest_wrote and not tr.mixed for tr in self.trajectories.values())

    @property
    def corrupted_only(self) -> int:
        return sum(tr.corrupted_wrote and not tr.mixed for tr in self.trajectories.values())

    def headline(self) -> str:
        """`4 of 5 RR trajectories had an honest writer (3 mixed, 1 honest only, 1 corrupted only)`."""
        n = len(self.trajectories)
        return (
            f"{self.with_honest} of {n} RR trajectories had an honest writer "
            f"({self.mixed} mixed, {self.honest_only} honest only, "
            f"{self.corrupted_only} corrupted only)"
        )

    def to_dict(self) -> dict:
        return {
            "kind": "speaker_summary",
            "method": "RRMaj",
            "trajectories": len(self.trajectories),
            "with_honest_writer": self.with_honest,
            "mixed": self.mixed,
            "honest_only": self.honest_only,
            "corrupted_only": self.corrupted_only,
            "per_trajectory": [tr.to_dict() for _, tr in sorted(self.trajectories.items())],
        }


# -- what was written: chunks, trajectories, methods ------------------------------------------------
@dataclass
class FoldedChunk:
    """Text one agent wrote at one turn, as the events showed it; `done` once its ChunkWritten
    arrived."""

    turn: int
    agent: int
    corrupted: bool
    model: str = ""  # known once the chunk is done
    text: str = ""
    n_tokens: int | None = None
    done: bool = False


@dataclass
class FoldedTrajectory:
    """An RR trajectory, or (MAJ) one agent's independent answer, as the events showed it."""

    method: str
    index: int
    order: tuple[int, ...] = ()  # the speaking order (MAJ: the one agent)
    chunks: list[FoldedChunk] = field(default_factory=list)
    answer: AnswerExtracted | None = None  # set when the trajectory is complete
    measures: list[TurnMeasured] = field(default_factory=list)  # the truth meter's readings

    @property
    def text(self) -> str:
        return "".join(c.text for c in self.chunks)

    def write(self, event: TokenDelta | ChunkWritten) -> None:
        """Live text extends the open chunk of (turn, agent); a finished chunk's text replaces it
        (detokenizing piece by piece may differ from decoding the whole chunk)."""
        last = self.chunks[-1] if self.chunks else None
        if last is None or last.done or (last.turn, last.agent) != (event.turn, event.agent):
            last = FoldedChunk(event.turn, event.agent, event.corrupted)
            self.chunks.append(last)
        if isinstance(event, TokenDelta):
            last.text += event.text
        else:
            last.model, last.text, last.n_tokens = event.model, event.text, event.n_tokens
            last.done = True

    def answer_record(self) -> dict | None:
        """The extracted answer's fields, without the text and the vote key (None until it is
        extracted)."""
        if self.answer is None:
            return None
        skip = ("kind", "text", "method", "key")
        return {k: v for k, v in self.answer.to_dict().items() if k not in skip}

    def to_dict(self) -> dict:
        """Everything, texts included (for saving a run)."""
        return {
            "index": self.index,
            "order": self.order,
            "chunks": [asdict(c) for c in self.chunks],
            "answer": self.answer_record(),
        }


@dataclass
class MethodRecord:
    """One method's trajectories, vote, decision and compute."""

    method: str
    trajectories: dict[int, FoldedTrajectory] = field(default_factory=dict)
    vote: Vote | None = None
    decision: Decision | None = None
    compute: ComputeUsed | None = None

    @property
    def done(self) -> bool:
        return self.compute is not None

    def trajectory(self, index: int) -> FoldedTrajectory:
        if index not in self.trajectories:
            self.trajectories[index] = FoldedTrajectory(self.method, index)
        return self.trajectories[index]

    def summary(self) -> dict:
        """A compact record without texts (what the app's API returns and its log keeps): the
        log's records less the decision's vote key and the compute per agent."""
        decision, compute = self.decision_record(), self.compute_record()
        return {
            "answers": {str(j): tr.answer_record() for j, tr in sorted(self.trajectories.items())},
            "chunks": sum(len(tr.chunks) for tr in self.trajectories.values()),
            "vote": self.vote_record(),
            "decision": _without(decision, "key"),
            "compute": _without(compute, "per_agent"),
            "done": self.done,
        }

    def vote_record(self) -> dict | None:
        return _fields(self.vote, "counts", "abstained")

    def decision_record(self) -> dict | None:
        """`answer` is readable; `key` is the vote key it won under."""
        return _fields(self.decision, "answer", "key", "correct", "fooled", "tied")

    def compute_record(self) -> dict | None:
        """The compute used, per agent included."""
        return _fields(self.compute, "decode_tokens", "prefill_tokens", "wall_s", "per_agent")


def _fields(event: Event | None, *names: str) -> dict | None:
    """Some fields of an event as plain JSON types (tuples become lists); None without the event."""
    if event is None:
        return None
    values = {name: getattr(event, name) for name in names}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def _without(record: dict | None, key: str) -> dict | None:
    return None if record is None else {k: v for k, v in record.items() if k != key}


class Fold:
    """Everything a run has shown so far, updated event by event.

    `methods` lists the methods to show before their first event (the Arena draws both panels at
    once); any other method is added when its first event arrives.
    """

    def __init__(self, methods: Iterable[str] = ()) -> None:
        self.methods: dict[str, MethodRecord] = {m: MethodRecord(m) for m in methods}
        self.speakers = SpeakerTally()  # who wrote each RRMaj trajectory
        self.started: RunStarted | None = None  # the latest RunStarted (gold and target)
        self.events = 0  # events applied

    @property
    def target(self) -> str | None:
        return self.started.target if self.started is not None else None

    @property
    def done(self) -> bool:
        """Every method shown has reported its compute (its last event)."""
        return bool(self.methods) and all(m.done for m in self.methods.values())

    def method(self, name: str) -> MethodRecord:
        if name not in self.methods:
            self.methods[name] = MethodRecord(name)
        return self.methods[name]

    def apply(self, event: Event) -> FoldedTrajectory | None:
        """Fold in one event; returns the trajectory this event completed (AnswerExtracted)."""
        self.events += 1
        self.speakers.add(event)
        record = self.method(event.method)
        if isinstance(event, RunStarted):
            self.started = event
        elif isinstance(event, TrajectoryStarted):  # a trajectory (re)opens empty
            record.trajectories[event.trajectory] = FoldedTrajectory(
                event.method, event.trajectory, tuple(event.order)
            )
        elif isinstance(event, TokenDelta | ChunkWritten):
            record.trajectory(event.trajectory).write(event)
        elif isinstance(event, TurnMeasured):
            record.trajectory(event.trajectory).measures.append(event)
        elif isinstance(event, AnswerExtracted):
            trajectory = record.trajectory(event.trajectory)
            trajectory.answer = event
            return trajectory
        elif isinstance(event, Vote):
            record.vote = event
        elif isinstance(event, Decision):
            record.decision = event
        elif isinstance(event, ComputeUsed):
            record.compute = event
        return None


def fold(events: Iterable[Event]) -> Fold:
    """Fold a whole event stream."""
    state = Fold()
    for event in events:
        state.apply(event)
    return state
