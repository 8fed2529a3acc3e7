"""A run log's record: built here and only here from what the fold shows (`trajectory_record`,
`done_record`: the runner hands over the fold's objects), and read back here into the same
objects (`read_trajectory`, `read_done`: the replay and the converter).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from rrdemo.events import AnswerExtracted, ComputeUsed, Decision, TurnMeasured, Vote
from rrdemo.fold import FoldedChunk, FoldedTrajectory, MethodRecord


@dataclass(frozen=True)
class Unit:
    """Which (condition, question) unit a record belongs to, with the question's gold answer and
    the corruption target (None: nobody corrupted)."""

    condition: str  # the condition key, "task:config_hash"
    question_id: str
    gold: str | None
    target: str | None


_ANSWER_FIELDS = ("correct", "fooled", "last_agent", "last_corrupted", "n_tokens", "finish_reason")
_METER_SKIP = ("kind", "method", "trajectory")  # a reading's fields the trajectory record holds


def _chunk_record(chunk: FoldedChunk) -> dict:
    return {
        "turn": chunk.turn,
        "agent": chunk.agent,
        "role": "corrupted" if chunk.corrupted else "honest",
        "model": chunk.model,
        "text": chunk.text,
        "n_tokens": chunk.n_tokens,
    }


def trajectory_record(unit: Unit, trajectory: FoldedTrajectory) -> dict:
    """The "trajectory" line of a complete MAJ answer or RR trajectory: its order, finished
    chunks, the answer and the vote key it counts under, the truth meter's readings if any."""
    a = trajectory.answer
    if a is None:
        raise ValueError(f"{trajectory.method} trajectory {trajectory.index} has no answer yet")
    readings = [
        {k: v for k, v in m.to_dict().items() if k not in _METER_SKIP} for m in trajectory.measures
    ]
    return {
        "type": "trajectory",
        "condition": unit.condition,
        "question_id": unit.question_id,
        "method": trajectory.method,
        "trajectory": trajectory.index,
        "order": list(trajectory.order),
        "chunks": [_chunk_record(c) for c in trajectory.chunks if c.done],
        "answer": a.answer,
        "vote_key": a.key,
        **{name: getattr(a, name) for name in _ANSWER_FIELDS},
        **({"meter": readings} if readings else {}),
        "gold": unit.gold,
        "target": unit.target,
    }


def done_record(unit: Unit, methods: Iterable[MethodRecord]) -> dict:
    """The "done" line of a unit: per method its vote and decision, and the compute it used."""
    votes, compute = {}, {}
    for m in methods:
        if m.vote is not None or m.decision is not None:
            votes[m.method] = {**(m.vote_record() or {}), **(m.decision_record() or {})}
        if m.compute is not None:
            compute[m.method] = m.compute_record()
    return {
        "type": "done",
        "condition": unit.condition,
        "question_id": unit.question_id,
        "gold": unit.gold,
        "target": unit.target,
        "votes": votes,
        "compute": compute,
    }


def _unit(record: dict) -> Unit:
    return Unit(
        record["condition"], record["question_id"], record.get("gold"), record.get("target")
    )


def read_trajectory(record: dict) -> tuple[Unit, FoldedTrajectory]:
    """A "trajectory" line as the fold's trajectory (chunks, answer, readings) and its unit. A
    chunk is corrupted when its role says so (any other role is an honest one)."""
    method, index = record["method"], record["trajectory"]
    chunks = [
        FoldedChunk(
            c["turn"],
            c["agent"],
            c["role"] == "corrupted",
            c["model"],
            c["text"],
            c["n_tokens"],
            True,
        )
        for c in record["chunks"]
    ]
    answer = AnswerExtracted(
        method,
        index,
        record["answer"],
        **{name: record[name] for name in _ANSWER_FIELDS},
        text="".join(c.text for c in chunks),
        key=record["vote_key"],
    )
    measures = [TurnMeasured(method, index, **m) for m in record.get("meter") or []]
    trajectory = FoldedTrajectory(method, index, tuple(record["order"]), chunks, answer, measures)
    return _unit(record), trajectory


def read_done(record: dict) -> tuple[Unit, dict[str, MethodRecord]]:
    """A "done" line as the fold's per-method vote, decision and compute, and its unit."""
    methods: dict[str, MethodRecord] = {}
    for name, v in record["votes"].items():
        m = methods.setdefault(name, MethodRecord(name))
        m.vote = Vote(name, v["counts"], v["abstained"])
        m.decision = Decision(
            name, v["answer"], v["correct"], v["fooled"], tuple(v["tied"]), v["key"]
        )
    for name, c in record["compute"].items():
        methods.setdefault(name, MethodRecord(name)).compute = ComputeUsed(
            name, c["decode_tokens"], c["prefill_tokens"], c["wall_s"], c.get("per_agent", {})
        )
    return _unit(record), methods


def same_record(record: dict, condition: str | None = None) -> dict:
    """`record` as this writer writes it (under `condition` when given): read back into the
    fold's objects and written again; a current record comes back equal."""
    if record.get("type") == "trajectory":
        unit, trajectory = read_trajectory(record)
        unit = replace(unit, condition=condition or unit.condition)
        return trajectory_record(unit, trajectory)
    if record.get("type") == "done":
        unit, methods = read_done(record)
        unit = replace(unit, condition=condition or unit.condition)
        return done_record(unit, methods.values())
    raise ValueError(f"not a trajectory or done record: {str(record)[:80]}")
