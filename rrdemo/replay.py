"""Recorded runs played back: one unit of a run log turned back into the events a live run yields.

A *unit* of a run log (rrdemo.runs.log) is one question of one condition: its MAJ answers and RRMaj
trajectories with every chunk, both votes, both decisions and the compute used. `read_unit` picks
one out of a parsed log; `recorded_events` rebuilds the events the protocols yielded for it
(rrdemo.events), each stamped with the decoding step at which it happened, MAJ and RRMaj side by
side as in the Arena's live run; `replay` plays them at a readable pace. Front ends fold and draw
them exactly as they fold and draw a live run (rrdemo.fold): a recording is shown by the same code.
"""

from __future__ import annotations

import heapq
import math
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from rrdemo.config import RunConfig
from rrdemo.errors import RRError
from rrdemo.events import (
    METHODS,
    ChunkWritten,
    ComputeUsed,
    Event,
    RunStarted,
    TokenDelta,
    TrajectoryStarted,
    TurnMeasured,
)
from rrdemo.fold import FoldedTrajectory
from rrdemo.runs.log import RunLog
from rrdemo.runs.record import read_done, read_trajectory
from rrdemo.tasks import Question, load_questions

REPLAY_SECONDS = 12.0  # a whole recorded run plays in about this long: readable, never tedious
TOKENS_PER_PIECE = 4  # a recorded chunk grows on screen by about this many tokens at a time


@dataclass(frozen=True)
class RecordedUnit:
    """One logged question of one condition, with where it was recorded."""

    source: str  # the log as shown to people: a repository path or an uploaded file's name
    condition: dict[str, Any]  # the log header's condition (its config, label, task, ...)
    question_id: str
    trajectories: tuple[dict[str, Any], ...]  # the unit's trajectory records, in log order
    done: dict[str, Any]  # the unit's "done" record: gold, target, votes, compute
    recorded: str = ""  # when the log was written (a date), "" when unknown
    question_text: str = ""  # the question as asked, "" when its data set is not at hand

    @property
    def config(self) -> RunConfig:
        return RunConfig.from_dict(self.condition["config"])

    @property
    def config_hash(self) -> str:
        return self.condition["config_hash"]

    @property
    def models(self) -> str:
        """The models of the agents, e.g. "smollm2"."""
        return ", ".join(dict.fromkeys(a["model"] for a in self.condition["config"]["agents"]))

    @property
    def setting(self) -> str:
        """`strong 3c2t · logic3 · K = 16`: what the condition is, in the paper's words."""
        c = self.condition
        return f"{c['strength']} {c.get('label', '')} · {c['task']} · K = {c['k']}".replace(
            "  ", " "
        )

    def verdict(self) -> str:
        """`MAJ fooled (C) · RRMaj correct (A)`: how each method's vote ended."""
        votes = self.done.get("votes") or {}
        return " · ".join(f"{m} {_verdict_word(votes.get(m) or {})}" for m in METHODS)

    def provenance(self) -> str:
        """Who recorded it, when, with which config, and from which log."""
        parts = [self.models, self.recorded or "date unknown", f"config {self.config_hash}"]
        return " · ".join([*parts, self.source, self.question_id])


def _verdict_word(vote: dict) -> str:
    answer = vote.get("answer")
    if answer is None:
        return "no answer"
    word = "correct" if vote.get("correct") else "fooled" if vote.get("fooled") else "wrong"
    return f"{word} {answer}"


# -- picking a unit out of a log ------------------------------------------------------------------
UnitRecords = tuple[dict[str, Any], tuple[dict[str, Any], ...]]  # "done" record, trajectories


@dataclass(frozen=True)
class UnitIndex:
    """A log's finished units, indexed in one pass over its records: each unit's records, and
    the condition keys each question id is finished under."""

    units: dict[tuple[str, str], UnitRecords]  # (condition key, question id), in log order
    keys: dict[str, list[str]]  # question id -> condition keys


def unit_index(log: RunLog) -> UnitIndex:
    """The index of `log`'s finished units, built once per parsed log (linear in its records), so
    picking every unit of a large log costs one pass, not one per unit."""
    cached = vars(log).get("_unit_index")
    if cached is not None and cached[0] == len(log.records):
        return cached[1]
    units: dict[tuple[str, str], UnitRecords] = {}
    keys: dict[str, list[str]] = {}
    for done, trajectories in log.units():
        if done is None:  # a unit the run stopped in: not finished
            continue
        unit = (done["condition"], done.get("question_id"))
        units[unit] = (done, tuple(trajectories))
        keys.setdefault(unit[1], []).append(unit[0])
    index = UnitIndex(units, keys)
    vars(log)["_unit_index"] = (len(log.records), index)
    return index


MAX_RECORDS = 20_000  # records of a log replayed in the web app (a web sweep's log has under 1,000)


def check_replayable(log: RunLog, name: str) -> None:
    """RRError (one sentence naming `name`) unless every size a replay of `log` works through is
    bounded: at most `MAX_RECORDS` records, and each chunk a whole number of 0 to L tokens
    (`rrdemo.limits.Limits.tokens`) holding at most as many words, so a replay's pieces and
    frames are bounded before any is made (`_pieces`)."""
    from rrdemo.limits import ENV, limits

    most = limits().tokens
    if len(log.records) > MAX_RECORDS:
        raise RRError(
            f"{name} has {len(log.records):,} records; a log replayed here has at most "
            f"{MAX_RECORDS:,}: replay it with `python -m rrdemo replay`"
        )
    for number, record in log.records:
        chunks = record.get("chunks") if record.get("type") == "trajectory" else []
        for chunk in chunks if isinstance(chunks, list) else [None]:
            n = chunk.get("n_tokens") if isinstance(chunk, dict) else None
            text = chunk.get("text") if isinstance(chunk, dict) else None
            whole = isinstance(n, int) and not isinstance(n, bool)
            if not whole or not 0 <= n <= most or not isinstance(text, str):
                shown = repr(n) if whole and len(str(n)) <= 12 else "a value out of range"
                raise RRError(
                    f"{name}: line {number} has a chunk whose token count is {shown}; a chunk "
                    f"holds text and 0 to {most} tokens ({ENV['tokens']})"
                )
            if len(text.split()) > most:
                raise RRError(
                    f"{name}: line {number} has a chunk of more than {most} words; a chunk "
                    f"holds at most {most} ({ENV['tokens']})"
                )


def finished_units(log: RunLog) -> list[tuple[str, str]]:
    """(condition key, question id) of every finished unit, in log order."""
    return list(unit_index(log).units)


def read_unit(
    log: RunLog,
    question_id: str,
    condition: str | None = None,
    *,
    source: str | None = None,
    recorded: str = "",
    with_text: bool = True,
) -> RecordedUnit:
    """The finished unit of `question_id` (under `condition` when the log has it in several),
    with the question's text from its data set unless `with_text` is False (a listing).

    RRError, naming what the log does hold, when the question is not there or is ambiguous.
    """
    source = source or str(log.path)
    index = unit_index(log)
    keys = [key for key in index.keys.get(question_id, []) if condition in (None, key)]
    if not keys:
        held = list(index.keys)
        shown = ", ".join(map(str, held[:8])) + (", ..." if len(held) > 8 else "")
        where = f" under condition {condition}" if condition else ""
        raise RRError(
            f"{source} has no finished question {question_id!r}{where}; "
            f"its finished questions are: {shown or 'none yet'}"
        )
    if len(keys) > 1:
        labels = ", ".join(f"{k} ({log.conditions[k].get('label', '?')})" for k in keys)
        raise RRError(
            f"{source} has question {question_id!r} under several conditions; pick one: {labels}"
        )
    key = keys[0]
    done, trajectories = index.units[(key, question_id)]
    # a unit redone after a kill was cut from the log first: its records are each there once
    cond = log.conditions[key]
    found = find_question(cond["task"], question_id) if with_text else None
    text = found[1].text if found else ""
    return RecordedUnit(source, cond, question_id, trajectories, done, recorded, text)


def find_question(task: str, question_id: str) -> tuple[int, Question] | None:
    """The question's index in its data set (as the Arena numbers them) and the question; None
    when the data set is not at hand (a hub-only source offline, an unknown task)."""
    try:
        questions = load_questions(task)
    except (RRError, OSError):
        return None
    return next(((i, q) for i, q in enumerate(questions) if q.qid == question_id), None)


# -- the recorded events, each at the decoding step it happened -----------------------------------
def _pieces(text: str, n_tokens: int) -> list[str]:
    """`text` cut at word starts into about n_tokens / TOKENS_PER_PIECE pieces that join back to it."""
    words = [w for w in re.split(r"(?<=\s)(?=\S)", text) if w]
    count = max(1, min(len(words), math.ceil(n_tokens / TOKENS_PER_PIECE)))
    bounds = [round(i * len(words) / count) for i in range(count + 1)]
    return ["".join(words[a:b]) for a, b in zip(bounds, bounds[1:], strict=False)]


def _measured(
    trajectories: list[FoldedTrajectory], which: Callable[[int], bool]
) -> list[TurnMeasured]:
    """The truth meter's logged readings of the turns `which` picks, trajectory by trajectory."""
    return [m for tr in trajectories for m in tr.measures if which(m.turn)]


def _method_events(unit: RecordedUnit, method: str) -> list[tuple[float, Event]]:
    """One method's events by decoding step: trajectories decode in lockstep, turn by turn (MAJ: one
    turn), a turn lasts as long as its longest chunk, and a chunk is written when its last token
    is decoded."""
    trajectories = [read_trajectory(r)[1] for r in unit.trajectories if r["method"] == method]
    done = unit.done
    config = unit.condition["config"]
    events: list[tuple[float, Event]] = [
        (
            0,
            RunStarted(
                method,
                config,
                unit.config_hash,
                unit.question_id,
                unit.question_text,
                done.get("gold"),
                done.get("target"),
            ),
        ),  # fmt: skip
    ]
    events += [(0, TrajectoryStarted(method, tr.index, tr.order)) for tr in trajectories]
    events += [(0, m) for m in _measured(trajectories, lambda turn: turn < 0)]  # the truth meter
    turns = sorted({c.turn for tr in trajectories for c in tr.chunks})
    start = 0.0
    for turn in turns:
        longest = 0
        for tr in trajectories:
            for c in (c for c in tr.chunks if c.turn == turn):
                n = c.n_tokens or 0
                pieces = _pieces(c.text, n)
                for i, piece in enumerate(pieces[:-1], start=1):
                    at = start + n * i / len(pieces)
                    delta = TokenDelta(method, tr.index, turn, c.agent, c.corrupted, piece)
                    events.append((at, delta))
                written = ChunkWritten(
                    method, tr.index, turn, c.agent, c.corrupted, c.model, c.text, n
                )
                events.append((start + n, written))
                longest = max(longest, n)
        start += max(longest, 1)
        if method == "RRMaj":  # the meter reads each RR turn once it is written
            events += [(start, m) for m in _measured(trajectories, lambda t, turn=turn: t == turn)]
    if method == "MAJ":  # and MAJ answers once they are complete, every K tokens
        events += [(start, m) for m in _measured(trajectories, lambda turn: turn >= 0)]
    events += [(start, tr.answer) for tr in trajectories]
    votes = read_done(done)[1][method]
    used = votes.compute or ComputeUsed(method, 0, 0, 0.0, {})
    events += [(start, votes.vote), (start, votes.decision), (start, used)]
    return sorted(events, key=lambda timed: timed[0])  # stable: a step's events keep their order


def recorded_events(unit: RecordedUnit) -> list[tuple[float, Event]]:
    """Every event of the unit with its decoding step, both methods merged by step (MAJ first on
    a tie), each method's own events in the order it yielded them."""
    streams = []
    for rank, method in enumerate(METHODS):
        if any(r["method"] == method for r in unit.trajectories):
            timed = _method_events(unit, method)
            streams.append([(at, rank, i, event) for i, (at, event) in enumerate(timed)])
    return [(at, event) for at, _, _, event in heapq.merge(*streams)]


def replay(
    unit: RecordedUnit,
    seconds: float = REPLAY_SECONDS,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Iterator[Event]:
    """The unit's events, paced so that the whole run plays in about `seconds` (0: at once)."""
    timeline = recorded_events(unit)
    last = max((at for at, _ in timeline), default=0) or 1
    begin = clock()
    for at, event in timeline:
        wait = begin + seconds * at / last - clock()
        if wait > 0:
            sleep(wait)
        yield event
