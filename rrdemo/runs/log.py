"""The run log read: one JSONL file per sweep, parsed here to resume, report and replay.

The log is appended and flushed as the run goes (`rrdemo.runs.write`):
  * a header line: the format tag, its version, the full normalised sweep and its conditions;
  * one "trajectory" line per MAJ answer / RR trajectory as it finishes (each chunk with its agent
    and role, the answer, correct, fooled, last speaker, tokens);
  * one "done" line per (condition, question) unit with both votes and the compute used.
A last line without its newline is a write cut short by a kill and is ignored by every reader.
`read_log` is the one parser; `open_log` (resume), `read_run` (the report's outcomes) and the
Experiments tab all read through it. A record's fields are built and read back in
`rrdemo.runs.record`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rrdemo.config import Composition
from rrdemo.errors import RRError
from rrdemo.events import METHODS
from rrdemo.speakers import chunk_roles

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
