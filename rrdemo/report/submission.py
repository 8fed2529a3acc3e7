"""The leaderboard submission contract, owned by the library (one schema version, `SCHEMA_VERSION`).

A submission is one JSON document: who submitted it, where the numbers come from (`provenance`),
and result rows, one per ensemble configuration (model, dataset, strength, N = c + t agents, K,
M, L, and the adversary, prompt style and end-of-sequence policy, null when not stated) with its
MAJ and RRMaj accuracies (fractions in [0, 1]), the questions they stand on and the estimator
that made them (`ESTIMATORS`); a superseded row is shown labelled and never ranked. Its sizes
range up to the engine's own limits (`rrdemo.limits.Limits`); what no real run can give is
checked in `submission_checks`. `parse_submission` reads a file back and rejects a bad one with
one readable reason per problem (`submission_reasons`); the one builder is
`rrdemo.report.submission_builder`. The leaderboard imports this, never the reverse.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rrdemo.config import (
    ADVERSARIES,
    BEYOND_PAPER,
    EOS_POLICIES,
    PROMPT_STYLES,
    STRENGTHS,
    STYLE_AND_POLICY,
    Composition,
)
from rrdemo.errors import RRError
from rrdemo.report.submission_checks import row_problems, short
from rrdemo.report.submission_reasons import readable_reasons
from rrdemo.tasks import TASK_NAMES
from rrdemo.tasks.generated import GENERATED_NAMES

SCHEMA_VERSION = 4  # what exports write and the server accepts
MAX_FILE_BYTES = 1024 * 1024  # 1 MiB: a full paper table is ~20 KiB
MAX_ROWS = 1000

# The paper's six benchmarks (rrdemo.tasks), then the generated arithmetic arith1..arith12
# (rrdemo.tasks.generated, beyond the paper: the board labels and ranks it apart); our `demo`
# questions are not one.
DATASETS = (*TASK_NAMES, *GENERATED_NAMES)
SUBMITTED_SOURCES = ("local_run", "uploaded")
# Sources nobody can submit: the paper's tables and this project's own committed sweeps
# (leaderboard/project_runs/*/submission.json), both stored when the board opens
# (leaderboard.service.seed_board).
RESERVED_SOURCES = {
    "paper": "the paper's seeded tables",
    "rrdemo": "the sweeps this project commits (leaderboard/project_runs/*/submission.json)",
}
ALL_SOURCES = (*RESERVED_SOURCES, *SUBMITTED_SOURCES)

# The earliest `created` a submission may give: the paper's tables (leaderboard.paper_seed).
EARLIEST = datetime(2025, 1, 1, tzinfo=timezone.utc)


# How a row's accuracies were computed. "decisions" is the headline everywhere (board, Arena,
# report's paired table): each question's MAJ and RRMaj vote as the run cast it, at M = M*, the
# numbers the paired bootstrap and McNemar's test read. "pool-draws" is the paper's appendix D:
# the mean over 50 draws of M members from each question's pool (the paper's tables).
ESTIMATORS = {
    "decisions": "run's decisions",
    "pool-draws": "pool draws",
}
ESTIMATOR_MEANINGS = {
    "decisions": "each question's MAJ and RRMaj vote as the run cast it (M = M*)",
    "pool-draws": "mean over 50 draws of M members from each question's pool (paper, appendix D)",
}
MAX_REASON = 300  # characters of a superseded row's reason
MAX_PROVENANCE = 300  # characters of a submission's provenance


_MODEL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")
_TOKEN = re.compile(r"^[A-Za-z0-9._:+-]{1,128}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# The run settings beyond the paper that a row may state (null: not stated), with their allowed
# values (rrdemo.config) and what a rejection calls them. A run's rows take the adversary from the
# report's grouping by strategy, the others from each condition's logged config.
STATED_SETTINGS = {
    "adversary": (ADVERSARIES, "adversary strategy"),
    "prompt_style": (PROMPT_STYLES, "prompt style"),
    "eos_policy": (EOS_POLICIES, "end-of-sequence policy"),
}

Fraction = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Interval = Annotated[list[Fraction], Field(min_length=2, max_length=2)]


class SubmissionRejected(RRError):
    """A submission file failed validation; `reasons` holds one readable line per problem."""

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = list(reasons)
        super().__init__("; ".join(self.reasons))


def _check_text(value: str, what: str, limit: int) -> str:
    if len(value) > limit:
        raise ValueError(f"{what} is {len(value)} characters long; at most {limit} are allowed")
    if _CONTROL.search(value):
        raise ValueError(f"{what} contains control characters; only printable text is allowed")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (JSON's "\ud800"): no text can hold it
        raise ValueError(f"{what} holds a character that is not text (a lone surrogate)") from None
    return value


class AgentCounts(Composition):
    """rho, the paper's `3c2t` label and the rho band of a row with N (`n_agents`) agents, c
    (`n_corrupted`) of them corrupted."""

    @property
    def n(self) -> int:
        return self.n_agents

    @property
    def c(self) -> int:
        return self.n_corrupted


class ResultRow(AgentCounts, BaseModel):
    """One ensemble configuration and its measured accuracies (fractions in [0, 1])."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    model: str  # hub id (org/name) or a name from rrdemo's model registry
    model_revision: str | None  # hub commit / tag the weights came from; null when unknown
    agent_models: list[str]  # one model per agent (heterogeneous ensembles); length N
    corrupted_agents: list[int]  # 0-based indices of the c corrupted agents
    dataset: Literal[DATASETS]  # a paper benchmark (rrdemo.tasks.TASK_NAMES) or arith1..arith12
    strength: Literal[STRENGTHS]  # one of rrdemo.config.STRENGTHS
    n_agents: int  # N
    n_corrupted: int  # c
    n_honest: int  # t
    k: int  # K, tokens per RR turn
    m: int  # M, RR trajectories voted by RRMaj
    max_tokens: int | None  # L, max tokens per answer; null when the source does not state it
    n_questions: int  # questions evaluated (the paper: 128 per dataset)
    maj_accuracy: Fraction | None  # MAJ accuracy; may be null only on 0cNt / Nc0t bound rows
    rrmaj_accuracy: Fraction | None  # RRMaj accuracy; same rule
    maj_ci: Interval | None = None  # [lo, hi] interval, or null
    rrmaj_ci: Interval | None = None
    config_hash: str  # hash of the RunConfig that produced the row ("paper" for the seed)
    # the corrupted agents' strategy; null (or absent) when not stated (the paper: static)
    adversary: Literal[ADVERSARIES] | None = None  # one of rrdemo.config.ADVERSARIES
    # the prompt style and the end-of-sequence policy of the run; null (or absent) when not stated
    prompt_style: Literal[PROMPT_STYLES] | None = None  # one of rrdemo.config.PROMPT_STYLES
    eos_policy: Literal[EOS_POLICIES] | None = None  # one of rrdemo.config.EOS_POLICIES
    estimator: Literal[tuple(ESTIMATORS)]  # how the accuracies were computed (`ESTIMATORS`)
    # why the row is no longer current (an old prompt, too few questions); null: current
    superseded: str | None = None
    # estimator "decisions": the questions only MAJ / only RRMaj got right (the paired counts the
    # board's intervals resample); null when not known
    maj_only: int | None = None
    rrmaj_only: int | None = None

    @field_validator("superseded")
    @classmethod
    def _reason(cls, value: str | None) -> str | None:
        if value is None:
            return None
        value = _check_text(value.strip(), "superseded", MAX_REASON)
        if not value:
            raise ValueError("superseded must give the reason (or be null for a current row)")
        return value

    @field_validator("model", "agent_models")
    @classmethod
    def _model_id(cls, value: str | list[str]) -> str | list[str]:
        for name in [value] if isinstance(value, str) else value:
            if not _MODEL_ID.match(name):
                each = "" if isinstance(value, str) else "each agent model "
                raise ValueError(
                    f"{each}must be a hub id like org/name or a registry name "
                    "(letters, digits, . _ / -, at most 200 characters)"
                )
        return value

    @field_validator("model_revision", "config_hash")
    @classmethod
    def _token(cls, value: str | None) -> str | None:
        if value is not None and not _TOKEN.match(value):
            raise ValueError("must be 1-128 characters from letters, digits and . _ : + -")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ResultRow:
        """Every problem of the row at once (`rrdemo.report.submission_checks`)."""
        problems = row_problems(self)
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def config_key(self) -> tuple[Any, ...]:
        """What makes two rows the same configuration (used to reject repeats in one file)."""
        return (
            self.model,
            self.model_revision,
            tuple(self.agent_models),
            tuple(sorted(self.corrupted_agents)),
            self.dataset,
            self.strength,
            self.n_agents,
            self.k,
            self.m,
            self.max_tokens,
            *(getattr(self, name) or BEYOND_PAPER[name] for name in STATED_SETTINGS),
        )


class Submission(BaseModel):
    """A leaderboard submission file: metadata plus result rows (`schema_version` 3)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    schema_version: int
    submitter: str  # free text shown on the board (escaped); 1-100 characters
    notes: str = ""  # free text, at most 2000 characters (escaped when shown)
    source: Literal[(*SUBMITTED_SOURCES, *RESERVED_SOURCES)]  # reserved ones only when seeded
    # the study file, log or table that made the rows (a path relative to the project for this
    # project's own sweeps, a log's file name for an export, the table's label for the paper)
    provenance: str
    rrdemo_version: str  # version of rrdemo that produced the numbers
    created: Annotated[datetime, Field(strict=False)]  # ISO 8601 time the results were exported
    results: list[ResultRow]

    @field_validator("created", mode="before")
    @classmethod
    def _created_text(cls, value: Any) -> Any:
        if not isinstance(value, (str, datetime)):  # a bare number would be read as a timestamp
            raise ValueError("must be an ISO 8601 time as text, e.g. 2026-05-01T12:00:00+00:00")
        return value

    @field_validator("created")
    @classmethod
    def _created_past(cls, value: datetime) -> datetime:
        aware = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        if aware > datetime.now(timezone.utc) + timedelta(days=1):
            raise ValueError("lies in the future; give the time the results were exported")
        if aware < EARLIEST:
            raise ValueError(
                f"is before {EARLIEST:%Y-%m-%d}, the paper's own tables; give the time the "
                "results were exported"
            )
        return value

    @field_validator("schema_version")
    @classmethod
    def _version(cls, value: int) -> int:
        if value != SCHEMA_VERSION:
            raise ValueError(
                f"version {short(value)} is not supported (this server accepts {SCHEMA_VERSION})"
            )
        return value

    @field_validator("submitter", "notes", "provenance")
    @classmethod
    def _texts(cls, value: str, info) -> str:
        name = info.field_name
        if name == "notes":
            return _check_text(value, "notes", 2000)
        value = _check_text(value.strip(), name, 100 if name == "submitter" else MAX_PROVENANCE)
        if not value:
            raise ValueError(
                "submitter must not be empty"
                if name == "submitter"
                else "provenance must name the study file or log that made the rows"
            )
        return value

    @field_validator("rrdemo_version")
    @classmethod
    def _rrdemo_version(cls, value: str) -> str:
        if not _TOKEN.match(value):
            raise ValueError("must be a version string like 0.1.0")
        return value

    @field_validator("results")
    @classmethod
    def _rows(cls, value: list[ResultRow]) -> list[ResultRow]:
        if not value:
            raise ValueError("results is empty; give at least one result row")
        if len(value) > MAX_ROWS:
            raise ValueError(f"results has {len(value)} rows; at most {MAX_ROWS} are allowed")
        seen: dict[tuple[Any, ...], int] = {}
        for i, row in enumerate(value):
            first = seen.setdefault(row.config_key(), i)
            if first != i:
                raise ValueError(f"results[{i}] repeats the configuration of results[{first}]")
        return value

    def canonical_json(self) -> str:
        """A stable JSON text of the validated content (sorted keys, no whitespace).

        A row's `prompt_style`, `eos_policy` or paired counts left null are left out, so a file
        that does not state them keeps the hash the journal and the audit log know it by.
        """
        data = self.model_dump(mode="json")
        for row in data["results"]:
            for name in (*STYLE_AND_POLICY, "maj_only", "rrmaj_only"):
                if row[name] is None:
                    del row[name]
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)

    def content_hash(self) -> str:
        """sha256 of the canonical JSON: equal content means the same submission."""
        return hashlib.sha256(self.canonical_json().encode("ascii")).hexdigest()


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows; accuracies must be finite")


def validate_submission(data: dict[str, Any], *, allow_reserved: bool = False) -> Submission:
    """Validate a decoded JSON object; raise `SubmissionRejected` listing every problem."""
    if not isinstance(data, dict):
        raise SubmissionRejected(["the file must hold one JSON object (a submission)"])
    try:
        submission = Submission.model_validate(data)
    except ValidationError as error:
        raise SubmissionRejected(
            readable_reasons(error, ESTIMATOR_MEANINGS, STATED_SETTINGS, SUBMITTED_SOURCES)
        ) from None
    if submission.source in RESERVED_SOURCES and not allow_reserved:
        raise SubmissionRejected(
            [
                f"source: {submission.source!r} is reserved for "
                f"{RESERVED_SOURCES[submission.source]}; use local_run or uploaded"
            ]
        )
    return submission


def parse_submission(
    raw: bytes, *, max_bytes: int = MAX_FILE_BYTES, allow_reserved: bool = False
) -> Submission:
    """Decode and validate a submission file's bytes (size limit, strict UTF-8, JSON, schema)."""
    if len(raw) > max_bytes:
        raise SubmissionRejected(
            [
                f"the file is {len(raw)} bytes; the limit is {max_bytes} bytes ({max_bytes / 2**20:g} MiB)"
            ]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SubmissionRejected(
            [f"the file is not UTF-8 text (bad byte at offset {error.start}); save it as UTF-8"]
        ) from None
    text = text.removeprefix("\ufeff")
    try:
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise SubmissionRejected(
            [f"the file is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})"]
        ) from None
    except RecursionError:
        raise SubmissionRejected(["the file is not acceptable JSON: nesting is too deep"]) from None
    except SubmissionRejected:  # a key given twice (`_unique_keys`)
        raise
    except ValueError as error:  # NaN / Infinity literals, integers with thousands of digits
        detail = "a number has too many digits" if "digits" in str(error) else str(error)[:120]
        raise SubmissionRejected([f"the file is not acceptable JSON: {detail}"]) from None
    if isinstance(data, dict):
        _reject_non_finite(data)
    return validate_submission(data, allow_reserved=allow_reserved)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once: with a key twice, readers disagree on which
    value counts (Python keeps the last), so the file is refused."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise SubmissionRejected([f"the key {short(key)} appears twice in one object"])
        data[key] = value
    return data


def _reject_non_finite(data: Any, where: str = "file") -> None:
    """JSON like 1e999 decodes to infinity; say so instead of a confusing range error."""
    if isinstance(data, float) and not math.isfinite(data):
        raise SubmissionRejected([f"{where}: the number is too large to be represented"])
    if isinstance(data, dict):
        for key, value in data.items():
            _reject_non_finite(value, f"{where}.{key}" if where != "file" else str(key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            _reject_non_finite(value, f"{where}[{i}]")
