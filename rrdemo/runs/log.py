"""The run log: one JSONL file per sweep, written here, scanned here to resume, read here for reports.

The log is appended and flushed as the run goes:
  * a header line: the format tag, its version, the full normalised sweep and its conditions;
  * one "trajectory" line per MAJ answer / RR trajectory as it finishes (each chunk with its agent
    and role, the answer, correct, fooled, last speaker, tokens);
  * one "done" line per (condition, question) unit with both votes and the compute used.
A last line without its newline is a write cut short by a kill and is ignored by every reader.
`read_log` is the one parser; `open_log` (resume), `read_run` (the report's outcomes) and the
Experiments tab all read through it. A record is built here and only here, from what the fold
shows (`trajectory_record`, `done_record`: the runner hands over the fold's objects), and read
back here into the same objects (`read_trajectory`, `read_done`: the replay and the converter).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rrdemo.config import Composition
from rrdemo.errors import RRError
from rrdemo.events import (
    METHODS,
    AnswerExtracted,
    ComputeUsed,
    Decision,
    TurnMeasured,
    Vote,
)
from rrdemo.fold import FoldedChunk, FoldedTrajectory, MethodRecord
from rrdemo.speakers import chunk_roles

if TYPE_CHECKING:
    from rrdemo.runs.spec import Plan

LOG_FORMAT = "rrdemo-experiment"
# 3: a config is logged (and hashed) with every field; 2: chunks name the honest role "honest".
# An older log is refused; `rrdemo convert-logs` (rrdemo.runs.convert) brings it to this version.
LOG_VERSION = 3
RECORD_TYPES = ("trajectory", "done")

_CONDITION_FIELDS = (
    "key",
    "task",
    "config_hash",
    "ensemble",
    "n",
    "c",
    "strength",
    "k",
    "m_star",
    "max_tokens",
    "adversary",
    "turn_policy",
    "config",
)
_TRAJECTORY_FIELDS = (
    "condition",
    "question_id",
    "method",
    "trajectory",
    "vote_key",
    "correct",
    "last_corrupted",
)


# -- reading --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome(Composition):
    """One MAJ answer or one RR trajectory, with the condition it belongs to."""

    condition: str  # "task:config_hash", unique per condition
    ensemble: str  # model name, or the seats spelled out for a mixed ensemble
    task: str
    strength: str
    k: int
    max_tokens: int
    n: int  # N agents
    c: int  # corrupted agents
    m: int  # M of the condition's config: its pool size M* (the header's "m_star")
    question_id: str
    method: str  # "MAJ" or "RRMaj"
    trajectory: int
    vote_key: str | None  # what votes are grouped by; None = no answer could be read
    correct: bool
    corrupted: bool  # MAJ: the answering agent is corrupted; RRMaj: the last speaker is
    mixed: bool | None = None  # RRMaj: both an honest and a corrupted agent wrote (None: unknown)
    adversary: str = "static"  # adversary strategy of the condition (rrdemo.adversary)
    n_tokens: int = 0  # tokens written (the answer, or the whole shared trajectory)
    cut: bool = False  # stopped at L rather than by an end-of-sequence
    fooled: bool = False  # the answer is the corrupted agents' target
    opener: str | None = None  # RRMaj: the role ("honest" / "corrupted") that wrote first


@dataclass
class RunLog:
    """A parsed log: its header, its conditions by key, its records and its finished units."""

    path: Path
    header: dict[str, Any]
    conditions: dict[str, dict[str, Any]]
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (line, record)
    done: set[tuple[str, str]] = field(default_factory=set)  # (condition key, question id)
    keep_bytes: int = 0  # the end of the last finished unit: a resume cuts the log back to here

    def finished_units(self) -> list[dict[str, Any]]:
        """The "done" records, in log order."""
        return [record for _, record in self.records if record["type"] == "done"]

    def units(self) -> Iterator[tuple[dict[str, Any] | None, list[dict[str, Any]]]]:
        """Each unit's "done" record with its trajectory records, in log order; then each unit
        the run stopped in (trajectory records, no "done" record) with None."""
        open_units: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
        for _, record in self.records:
            unit = (record.get("condition"), record.get("question_id"))
            trajectories = open_units.setdefault(unit, [])
            if record["type"] == "done":
                yield record, open_units.pop(unit)
            else:
                trajectories.append(record)
        for trajectories in open_units.values():
            yield None, trajectories


def parse_log_line(path: Path, number: int, line: bytes) -> Any:
    """One JSONL line of a run log; a clear RRError when it is not JSON (line 1: not a log)."""
    try:
        return json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        if number == 1:
            raise RRError(f"{path} is not an rrdemo experiment log (line 1 is not JSON)") from None
        raise RRError(f"{path}: line {number} is not valid JSON; the log is damaged") from None


def _check_header(path: Path, record: Any) -> dict[str, dict[str, Any]]:
    """The header's conditions by key; RRError for a foreign file or another format version."""
    if not (
        isinstance(record, dict)
        and record.get("type") == "header"
        and record.get("format") == LOG_FORMAT
    ):
        raise RRError(f"{path} is not an rrdemo experiment log (line 1 has no {LOG_FORMAT} header)")
    version = record.get("version")
    if version != LOG_VERSION:
        older = isinstance(version, int) and not isinstance(version, bool) and version < LOG_VERSION
        fix = (
            f"convert it in place with `rrdemo convert-logs {path}` (nothing is run again)"
            if older
            else "it was written by another rrdemo; read it with that one"
        )
        raise RRError(
            f"{path}: log format version {version!r} is not supported "
            f"(this rrdemo reads version {LOG_VERSION}); {fix}"
        )
    conditions = {}
    for cond in record.get("conditions") or []:
        missing = [f for f in _CONDITION_FIELDS if not isinstance(cond, dict) or f not in cond]
        if missing:
            raise RRError(f"{path}: a condition in the header lacks {', '.join(missing)}")
        conditions[cond["key"]] = cond
    if not conditions:
        raise RRError(f"{path}: the header lists no conditions")
    return conditions


def read_log(path: Path | str) -> RunLog:
    """Parse and check a log written by the runner; RRError naming the first problem.

    A last line without its newline (a write cut short by a kill) is left out.
    """
    path = Path(path)
    if not path.is_file():
        raise RRError(f"{path} does not exist or is not a file; give the .jsonl log of a run")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RRError(f"cannot read {path}: {exc.strerror}") from None
    complete = raw.split(b"\n")[:-1]  # the piece after the last newline is empty or cut short
    if not complete:
        raise RRError(f"{path} is not an rrdemo experiment log (it is empty or has no header)")
    header = parse_log_line(path, 1, complete[0])
    log = RunLog(path, header, _check_header(path, header), keep_bytes=len(complete[0]) + 1)
    offset = log.keep_bytes
    for number, line in enumerate(complete[1:], start=2):
        offset += len(line) + 1
        record = parse_log_line(path, number, line)
        if not isinstance(record, dict) or record.get("type") not in RECORD_TYPES:
            raise RRError(f"{path}: line {number} is not a trajectory or done record")
        if record["type"] == "done":
            if record.get("condition") not in log.conditions:
                raise RRError(
                    f"{path}: line {number} refers to a condition the header does not list"
                )
            log.done.add((record["condition"], record.get("question_id")))
            log.keep_bytes = offset
        log.records.append((number, record))
    return log


# -- the report's view: one Outcome per MAJ answer / RR trajectory of a finished unit -------------
@dataclass
class Run:
    """A parsed experiment log: its header, its conditions and the rows of its finished units."""

    path: Path
    header: dict[str, Any]
    conditions: dict[str, dict[str, Any]]
    outcomes: list[Outcome] = field(default_factory=list)
    units: int = 0  # finished (condition, question) units
    # (condition, trajectory record) of every record with truth-meter readings (rrdemo.meter)
    metered: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)


def turn_tag(policy: str) -> str:
    """What an ensemble's name gets under an adaptive turn policy (rrdemo.turns), e.g.
    " [turns: sentence]": the main table, the K ablation and its plot then show each policy
    on its own lines; the fixed rule (the paper's) adds nothing."""
    return "" if policy == "fixed" else f" [turns: {policy}]"


def _mixed(record: dict) -> bool | None:
    """An RR trajectory record's chunks: did both an honest and a corrupted agent write? (MAJ: None)"""
    if record["method"] != "RRMaj" or not isinstance(record.get("chunks"), list):
        return None
    return len(chunk_roles(record["chunks"])) == 2


def _opener(record: dict) -> str | None:
    """An RR trajectory record's first writer's role (the first chunk with tokens); None for MAJ,
    an empty trajectory or chunks without roles."""
    if record["method"] != "RRMaj" or not isinstance(record.get("chunks"), list):
        return None
    written = (c.get("role") for c in record["chunks"] if c.get("n_tokens", 1) > 0)
    return next(written, None)


def _outcome(cond: dict[str, Any], record: dict[str, Any]) -> Outcome:
    return Outcome(
        condition=cond["key"],
        ensemble=cond["ensemble"] + turn_tag(cond["turn_policy"]),
        task=cond["task"],
        strength=cond["strength"],
        k=int(cond["k"]),
        max_tokens=int(cond["max_tokens"]),
        n=int(cond["n"]),
        c=int(cond["c"]),
        m=int(cond["m_star"]),
        question_id=str(record["question_id"]),
        method=record["method"],
        trajectory=int(record["trajectory"]),
        vote_key=record["vote_key"],
        correct=bool(record["correct"]),
        corrupted=bool(record["last_corrupted"]),
        mixed=_mixed(record),
        adversary=cond["adversary"],
        n_tokens=int(record.get("n_tokens") or 0),
        cut=record.get("finish_reason") == "length",
        fooled=bool(record.get("fooled")),
        opener=_opener(record),
    )


def read_run(path: Path | str) -> Run:
    """The outcomes of a log's finished units, for the report and the export.

    Only finished units count; rows of a unit cut short by a kill are left out (the run resumes
    them). RRError for a log with no finished unit or a damaged trajectory record.
    """
    log = read_log(path)
    path = log.path
    run = Run(path, log.header, log.conditions, units=len(log.done))
    seen = set()
    for number, record in log.records:
        if (
            record["type"] != "trajectory"
            or (record.get("condition"), record.get("question_id")) not in log.done
        ):
            continue
        missing = [f for f in _TRAJECTORY_FIELDS if f not in record]
        if missing or record["method"] not in METHODS:
            raise RRError(
                f"{path}: line {number} is not a complete trajectory record "
                f"({', '.join(missing) or 'method'})"
            )
        ident = (record["condition"], record["question_id"], record["method"], record["trajectory"])
        if ident in seen:
            raise RRError(f"{path}: line {number} repeats trajectory {ident}; the log is damaged")
        seen.add(ident)
        run.outcomes.append(_outcome(log.conditions[record["condition"]], record))
        if record.get("meter"):
            run.metered.append((log.conditions[record["condition"]], record))
    if not run.outcomes:
        raise RRError(f"{path} has no finished questions yet; run (or resume) the experiment first")
    return run


# -- a record: built from the fold's objects, read back into them ----------------------------------
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


# -- writing --------------------------------------------------------------------------------------
def header_for(plan: Plan) -> dict[str, Any]:
    from rrdemo.tasks.benchmarks import prompt_texts

    return {
        "type": "header",
        "format": LOG_FORMAT,
        "version": LOG_VERSION,
        "sweep": plan.sweep,
        "conditions": [c.describe() for c in plan.conditions],
        "prompts": prompt_texts(),  # the texts every prompt of the run was built from
    }


def prompt_changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    """Which prompt texts differ between two headers ("final_format, work_cue"), or ""."""
    before, after = old.get("prompts") or {}, new.get("prompts") or {}
    if not before:
        return "the log records none" if after else ""
    return ", ".join(k for k in dict.fromkeys([*before, *after]) if before.get(k) != after.get(k))


def dump_record(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


class LogWriter:
    """Appends records to the log, one write per line, flushed at once; locked against a second run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            import fcntl  # POSIX only; elsewhere the log is simply not locked

            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:
            pass
        except OSError:
            os.close(self._fd)
            raise RRError(
                f"{path} is being written by another run; wait for it or use another --out"
            ) from None

    def write(self, record: dict, sync: bool = False) -> None:
        os.write(self._fd, dump_record(record))
        if sync:
            os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def sweep_changes(old: dict, new: dict) -> str:
    """How the sweep of header `new` differs from that of header `old`: each changed setting as
    `name old -> new`, or, with the same settings, that the conditions differ."""
    before, after = old.get("sweep") or {}, new.get("sweep") or {}
    names = [
        name for name in dict.fromkeys([*after, *before]) if before.get(name) != after.get(name)
    ]
    if not names:
        return "same settings, but its conditions differ: other questions or configs"
    return "; ".join(
        f"{name} {_shown(before.get(name))} -> {_shown(after.get(name))}" for name in names
    )


def _shown(value: object, width: int = 60) -> str:
    text = json.dumps(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def check_resumable(path: Path, plan: Plan) -> tuple[RunLog, bool] | None:
    """The log at `path` and whether `plan` resumes it under new question counts; None when
    there is no log yet. RRError when it holds another sweep or was written with other prompts.
    Reads only: the dry run asks it too."""
    from rrdemo.runs.recount import recount_problem

    if not path.exists():
        return None
    header = header_for(plan)
    log = read_log(path)
    recounted = (  # the same sweep but its question counts (checked below)
        log.header.get("sweep") != plan.sweep
        or log.header.get("conditions") != header["conditions"]
    )
    problem = recount_problem(log.header, header, log.done) if recounted else None
    if problem is not None:
        raise RRError(
            f"{path} holds a different sweep ({sweep_changes(log.header, header)}); "
            + (
                f"its question counts cannot change so: {problem}"
                if problem
                else "rerun with the same settings to resume it, or choose another --out "
                "for this one"
            )
        )
    changed = prompt_changes(log.header, header)
    if changed:
        raise RRError(
            f"{path} was written with other prompts ({changed} changed since); its units "
            "cannot be continued under today's prompts: choose another --out"
        )
    return log, recounted


def open_log(path: Path, plan: Plan) -> tuple[LogWriter, set[tuple[str, str]]]:
    """Start a new log, or resume an existing one written by the same sweep (cut to its last unit),
    or by the same sweep with other question counts (`rrdemo.runs.recount`: its header rewritten)."""
    from rrdemo.runs.recount import rewrite_header

    header = header_for(plan)
    resumed = check_resumable(path, plan)
    if resumed is not None:
        log, recounted = resumed
        if recounted:  # the header names the new counts; a half-finished unit is dropped
            probe = LogWriter(path)  # refuses while another run writes this log
            try:
                rewrite_header(path, dump_record(header), log.keep_bytes)
            finally:
                probe.close()
            return LogWriter(path), log.done
        writer = LogWriter(path)
        os.truncate(path, log.keep_bytes)  # drop a half-finished unit; the runner redoes it
        return writer, log.done
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(dump_record(header))
    return LogWriter(path), set()


def merge_logs(paths: Sequence[Path | str], out: Path | str) -> int:
    """Join the logs of one sweep run in shards (`run_plan(shard=...)`) or on several machines
    into `out`: the header once, then every finished unit once (from the first log holding it),
    its trajectory records before its done record. Returns the number of units written. Logs
    of different sweeps are refused before anything is written."""
    logs = [read_log(path) for path in paths]
    if not logs:
        raise RRError("give at least one log to merge")
    for log in logs[1:]:
        if (log.header.get("sweep"), log.header.get("conditions")) != (
            logs[0].header.get("sweep"),
            logs[0].header.get("conditions"),
        ):
            changes = sweep_changes(logs[0].header, log.header)
            raise RRError(
                f"{log.path} holds a different sweep than {logs[0].path} ({changes}); not merged"
            )
        if prompt_changes(logs[0].header, log.header):
            raise RRError(
                f"{log.path} was written with other prompts than {logs[0].path} "
                f"({prompt_changes(logs[0].header, log.header)}); not merged"
            )
    seen: set[tuple[str, str]] = set()
    lines = [dump_record(logs[0].header)]
    for log in logs:
        pending: dict[tuple[str, str], list[dict]] = {}
        for _, record in log.records:
            unit = (record["condition"], record.get("question_id"))
            pending.setdefault(unit, []).append(record)
            if record["type"] == "done":
                records = pending.pop(unit)
                if unit not in seen:
                    seen.add(unit)
                    lines += [dump_record(r) for r in records]
    out = Path(out)
    tmp = out.with_name(out.name + ".merging")
    tmp.write_bytes(b"".join(lines))
    tmp.replace(out)
    return len(seen)
