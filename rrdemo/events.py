"""The one stream every front end reads: typed events yielded by the protocols.

The Gradio UI, the CLI and the experiment logger all consume these. Each event is a frozen
dataclass with a `kind` tag; `to_dict()` turns it into a JSON line.
`method` is "MAJ" or "RRMaj"; `trajectory` is the agent index for MAJ answers and the RR
trajectory index for RRMaj.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import ClassVar, Literal, get_args

Method = Literal["MAJ", "RRMaj"]
METHODS: tuple[Method, ...] = get_args(Method)  # in the order a run goes through them


@dataclass(frozen=True)
class Event:
    """What every event has: its `kind` tag and the method it belongs to."""

    kind: ClassVar[str] = "event"
    method: Method

    def to_dict(self) -> dict:
        return {"kind": self.kind, **asdict(self)}


@dataclass(frozen=True)
class RunStarted(Event):
    """A protocol begins: the full config, its hash, the question and the corruption target."""

    kind: ClassVar[str] = "run_started"
    config: dict
    config_hash: str
    question_id: str
    question: str
    gold: str | None
    target: str | None  # the distractor the corrupted agents are pushed toward


@dataclass(frozen=True)
class TrajectoryStarted(Event):
    """A trajectory opens; `order` is the agent speaking order (MAJ: the single agent)."""

    kind: ClassVar[str] = "trajectory_started"
    trajectory: int
    order: tuple[int, ...]


@dataclass(frozen=True)
class TokenDelta(Event):
    """Text just decoded inside a chunk that is still being written (for live display only)."""

    kind: ClassVar[str] = "token_delta"
    trajectory: int
    turn: int
    agent: int
    corrupted: bool
    text: str


@dataclass(frozen=True)
class ChunkWritten(Event):
    """A finished chunk: agent `agent` wrote `text` (`n_tokens` of its own tokenizer) at `turn`."""

    kind: ClassVar[str] = "chunk_written"
    trajectory: int
    turn: int
    agent: int
    corrupted: bool
    model: str
    text: str
    n_tokens: int


@dataclass(frozen=True)
class TurnMeasured(Event):
    """The truth meter after a turn (rrdemo.meter, runs with `meter` on): how likely an honest and
    a corrupted reader find the gold answer against the target, given the text so far.

    `readers` maps "honest" / "corrupted" (the roles present) to `p_gold`, `p_target` and
    `z = logit(p_gold) - logit(p_target)`. MAJ answers are read at the same token counts as RR
    turns: `turn` is then the K-token cut. `turn` -1 is the reading before anything is written.
    """

    kind: ClassVar[str] = "turn_measured"
    trajectory: int
    turn: int
    agent: int | None  # who wrote the turn (None before the first)
    corrupted: bool | None
    n_tokens: int  # tokens of the text read (the writers' tokenizers)
    readers: dict[str, dict[str, float]]


@dataclass(frozen=True)
class AnswerExtracted(Event):
    """A trajectory (RR) or an agent's answer (MAJ) is complete and its final answer extracted."""

    kind: ClassVar[str] = "answer_extracted"
    trajectory: int
    answer: str | None  # normal form, None when no answer could be read
    correct: bool | None  # None when the gold answer is unknown
    fooled: bool  # the answer equals the corruption target
    last_agent: int  # who wrote the final chunk (the paper's final-speaker analysis)
    last_corrupted: bool
    n_tokens: int
    finish_reason: Literal["eos", "length"]
    text: str  # the whole trajectory / answer text
    key: str | None  # the vote key it counts under; None when there is no answer


@dataclass(frozen=True)
class Vote(Event):
    """The plurality count over the extracted answers (None answers do not vote).

    Answers that share a vote key count together under the first such answer (e.g. "5" and
    "5.0" both count for "5" on MATH-500).
    """

    kind: ClassVar[str] = "vote"
    counts: dict[str, int]
    abstained: int


@dataclass(frozen=True)
class Decision(Event):
    """The method's final answer; `tied` lists the answers that tied when a tie was broken.

    `answer` is readable (the first extracted answer behind the winning vote key) and is what
    `correct` scores; `key` is the winning vote key itself (None when nothing was answered).
    """

    kind: ClassVar[str] = "decision"
    answer: str | None
    correct: bool | None
    fooled: bool
    tied: tuple[str, ...]
    key: str | None


@dataclass(frozen=True)
class ComputeUsed(Event):
    """What the method cost: decoded tokens, prefilled tokens, and wall time."""

    kind: ClassVar[str] = "compute_used"
    decode_tokens: int
    prefill_tokens: int
    wall_s: float
    per_agent: dict[str, dict[str, int]] = field(default_factory=dict)


class Observer:
    """Reads one method's event stream as it passes and may add events after each turn.

    `watch` wraps the stream (and sees every event, its own included); the protocols call
    `after_turn(t)` once turn t is written (t = -1: the trajectories have started, nothing is
    written yet), and yield what it yields in place. The truth meter (rrdemo.meter) is one; this
    base passes the stream through and adds nothing.
    """

    def watch(self, events: Iterator[Event]) -> Iterator[Event]:
        yield from events

    def after_turn(self, turn: int) -> Iterator[Event]:
        return iter(())
