"""The leaderboard submission contract, owned by the library (one schema version, `SCHEMA_VERSION`).

A submission is one JSON document: who submitted it, where the numbers come from (`provenance`:
the study file, log or table that made them), and a list of result rows, one per ensemble
configuration (model, dataset, corruption strength, N = c + t agents, K, M, L) with its MAJ and
RRMaj accuracies, the number of questions they stand on and the estimator that made them
(`ESTIMATORS`). A row may be marked superseded, with the reason: the board shows it labelled and
never ranks it. `build_submission` makes one from an
experiment log (`rrdemo export RUN.jsonl` writes it to a file); the leaderboard (its tab and
`python -m leaderboard submit FILE`) reads files back with `parse_submission`, which rejects bad
files with one readable reason per problem. The leaderboard imports this module, never the reverse.

A row names its ensemble by N (`n_agents`), c (`n_corrupted`) and t (`n_honest`), and the
corrupted agents' strategy (`adversary`: static, contextual or last-word, see rrdemo.adversary),
the prompt style (`prompt_style`: direct or step-by-step) and what a writer's end-of-sequence does
in RR (`eos_policy`: end or pass, docs/adversary.md); each is null when the source does not say,
as in the paper's tables, and counts as the setting's default (`rrdemo.config.BEYOND_PAPER`) when
rows are compared.

The contract needs only pydantic and the standard library (no gradio, no database); the builder
reads the run with the report's reader. Accuracies are fractions in [0, 1] (the paper prints
percentages). The format, its readable rejection messages and its one builder are one concept,
kept in one module.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

import rrdemo
from rrdemo.config import (
    ADVERSARIES,
    BEYOND_PAPER,
    EOS_POLICIES,
    PROMPT_STYLES,
    STRENGTHS,
    STYLE_AND_POLICY,
    Composition,
    logged_setting,
)
from rrdemo.errors import RRError
from rrdemo.report.models import UnnamedWeights, result_model
from rrdemo.report.stats import wilson95
from rrdemo.runs.log import read_log
from rrdemo.tasks import GENERATED_TASKS, TASK_NAMES
from rrdemo.tasks.data import DATASETS as BENCHMARK_DATA
from rrdemo.tasks.generated import BEYOND_THE_PAPER, GENERATED_NAMES, POOL_SIZE

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

# Sane ranges for the run settings (documented in docs/leaderboard.md).
N_RANGE = (1, 16)  # ensemble size N; the paper uses 3, 5 and 7
K_RANGE = (1, 4096)  # tokens per RR turn; the paper sweeps 3..500 and uses K = 100
M_RANGE = (1, 100)  # RR trajectories voted by RRMaj; the paper scales M up to 40
L_RANGE = (1, 32768)  # max tokens per answer L
QUESTIONS_RANGE = (1, 100_000)

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


def dataset_size(dataset: str) -> int:
    """Questions the dataset holds: a benchmark's test set, a generated task's pool."""
    spec = BENCHMARK_DATA.get(dataset)
    return spec.size if spec is not None else POOL_SIZE


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

    @field_validator("model")
    @classmethod
    def _model_id(cls, value: str) -> str:
        if not _MODEL_ID.match(value):
            raise ValueError(
                "must be a hub id like org/name or a registry name "
                "(letters, digits, . _ / -, at most 200 characters)"
            )
        return value

    @field_validator("agent_models")
    @classmethod
    def _agent_ids(cls, value: list[str]) -> list[str]:
        for name in value:
            if not _MODEL_ID.match(name):
                raise ValueError(
                    "each agent model must be a hub id like org/name or a registry name"
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
        problems: list[str] = []
        n, c, t = self.n_agents, self.n_corrupted, self.n_honest
        for name, value, (lo, hi) in (
            ("n_agents (N)", n, N_RANGE),
            ("k (K)", self.k, K_RANGE),
            ("m (M)", self.m, M_RANGE),
            ("n_questions", self.n_questions, QUESTIONS_RANGE),
        ):
            if not lo <= value <= hi:
                problems.append(f"{name} = {_short(value)} is out of range; allowed {lo}..{hi}")
        if self.max_tokens is not None and not L_RANGE[0] <= self.max_tokens <= L_RANGE[1]:
            problems.append(
                f"max_tokens (L) = {_short(self.max_tokens)} is out of range; "
                f"allowed {L_RANGE[0]}..{L_RANGE[1]}"
            )
        if c < 0 or t < 0:
            problems.append("n_corrupted (c) and n_honest (t) must not be negative")
        if c + t != n:
            problems.append(f"c + t must equal N: {_short(c)} + {_short(t)} != {_short(n)}")
        if len(self.agent_models) != n:
            problems.append(f"agent_models lists {len(self.agent_models)} models; N = {_short(n)}")
        if len(self.corrupted_agents) != c:
            problems.append(
                f"corrupted_agents lists {len(self.corrupted_agents)} agents; c = {_short(c)}"
            )
        if len(set(self.corrupted_agents)) != len(self.corrupted_agents):
            problems.append("corrupted_agents repeats an agent index")
        if any(not 0 <= i < n for i in self.corrupted_agents):
            problems.append(f"corrupted_agents indices must be in 0..{_short(n - 1)}")
        bound = c == 0 or t == 0
        if self.maj_accuracy is None and self.rrmaj_accuracy is None:
            problems.append("maj_accuracy and rrmaj_accuracy are both null; give at least one")
        elif not bound and (self.maj_accuracy is None or self.rrmaj_accuracy is None):
            problems.append(
                "maj_accuracy and rrmaj_accuracy are both required unless the row is a "
                "ceiling (0cNt) or floor (Nc0t) bound"
            )
        problems += self._possible() + self._paired()
        if problems:
            raise ValueError("\n".join(problems))
        return self

    def _possible(self) -> list[str]:
        """What no real run can give: more questions than the dataset has, an accuracy that is
        no count of n questions (the run's decisions), an interval that leaves out its accuracy
        or is narrower than n questions allow."""
        problems = []
        size, n = dataset_size(self.dataset), self.n_questions
        if n < 1:  # out of range, said once above
            return problems
        if n > size:
            problems.append(
                f"n_questions = {_short(n)}, but {self.dataset} has {size} questions; "
                "give the questions the accuracies stand on"
            )
        for method, value, ci in (
            ("maj", self.maj_accuracy, self.maj_ci),
            ("rrmaj", self.rrmaj_accuracy, self.rrmaj_ci),
        ):
            if value is None:
                if ci is not None:
                    problems.append(f"{method}_ci is given without {method}_accuracy")
                continue
            count = value * n
            if self.estimator == "decisions" and abs(count - round(count)) > 5e-7 * n + 1e-9:
                problems.append(
                    f"{method}_accuracy = {_short(value)} is not a whole number of the "
                    f"{_short(n)} questions (the run's decisions count each question once)"
                )
            if ci is None:
                continue
            lo, hi = ci
            if lo > hi:
                problems.append(f"{method}_ci must be [lo, hi] with lo <= hi")
            elif not lo - 5e-4 <= value <= hi + 5e-4:
                problems.append(f"{method}_ci {_short(ci)} does not contain {method}_accuracy")
            elif 0 < value < 1 and hi - lo < _narrowest(value, n):
                problems.append(
                    f"{method}_ci {_short(ci)} is narrower than {_short(n)} questions allow "
                    f"(at least {100 * _narrowest(value, n):.1f} points at this accuracy)"
                )
        return problems

    def _paired(self) -> list[str]:
        """Paired counts that no run's decisions can give (or given without them)."""
        b, c, n = self.maj_only, self.rrmaj_only, self.n_questions
        if b is None and c is None:
            return []
        if b is None or c is None or self.estimator != "decisions":
            return ["maj_only and rrmaj_only go together, on a row of estimator decisions"]
        if self.maj_accuracy is None or self.rrmaj_accuracy is None:
            return ["maj_only and rrmaj_only need both maj_accuracy and rrmaj_accuracy"]
        maj, rr = round(self.maj_accuracy * n), round(self.rrmaj_accuracy * n)
        if min(b, c) < 0 or b > maj or c > rr or maj - b != rr - c or b + c > n:
            return [
                f"maj_only = {_short(b)} and rrmaj_only = {_short(c)} are no split of the "
                f"{_short(n)} questions (MAJ right on {maj}, RRMaj on {rr}: both right on "
                "MAJ's minus maj_only and on RRMaj's minus rrmaj_only, the same count)"
            ]
        return []

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
        return value

    @field_validator("schema_version")
    @classmethod
    def _version(cls, value: int) -> int:
        if value != SCHEMA_VERSION:
            raise ValueError(
                f"version {_short(value)} is not supported (this server accepts {SCHEMA_VERSION})"
            )
        return value

    @field_validator("submitter")
    @classmethod
    def _submitter(cls, value: str) -> str:
        value = _check_text(value.strip(), "submitter", 100)
        if not value:
            raise ValueError("submitter must not be empty")
        return value

    @field_validator("notes")
    @classmethod
    def _notes(cls, value: str) -> str:
        return _check_text(value, "notes", 2000)

    @field_validator("provenance")
    @classmethod
    def _provenance(cls, value: str) -> str:
        value = _check_text(value.strip(), "provenance", MAX_PROVENANCE)
        if not value:
            raise ValueError("provenance must name the study file or log that made the rows")
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


def _narrowest(accuracy: float, n: int) -> float:
    """A third of the width of the normal 95% interval of `accuracy` over n questions: no
    interval of a real run is narrower (a bootstrap's or Wilson's is about the normal one)."""
    return 2 * 1.96 * math.sqrt(accuracy * (1 - accuracy) / n) / 3


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:20] + "..."


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows; accuracies must be finite")


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("function-after", "tagged-union") or "[" in str(part):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "file"


def _messages(error: ValidationError) -> list[str]:
    """Turn pydantic's errors into one readable line per problem, without echoing input."""
    lines: list[str] = []
    for err in error.errors(include_input=False, include_url=False):
        where = _loc(tuple(err["loc"]))
        kind = err["type"]
        msg = str(err["msg"]).removeprefix("Value error, ")
        if kind == "missing" and where.endswith("estimator"):
            line = f"{where}: required field is missing; say how the accuracies were computed: " + (
                ", ".join(f"{key} ({meaning})" for key, meaning in ESTIMATOR_MEANINGS.items())
            )
        elif kind == "missing":
            line = f"{where}: required field is missing"
        elif kind == "extra_forbidden":
            line = f"{where}: unknown field; remove it (allowed fields are listed in the schema)"
        elif kind == "literal_error" and where.endswith("dataset"):
            line = (
                f"{where}: unknown dataset; allowed: the paper's {', '.join(TASK_NAMES)}, "
                f"or {GENERATED_TASKS} ({BEYOND_THE_PAPER})"
            )
        elif kind == "literal_error" and where.endswith("strength"):
            line = f"{where}: unknown strength; allowed: {', '.join(STRENGTHS)}"
        elif kind == "literal_error" and where.rpartition(".")[2] in STATED_SETTINGS:
            allowed, what = STATED_SETTINGS[where.rpartition(".")[2]]
            line = f"{where}: unknown {what}; allowed: {', '.join(allowed)}"
        elif kind == "literal_error" and where == "source":
            line = f"source: must be one of {', '.join(SUBMITTED_SOURCES)}"
        elif kind == "literal_error" and where.endswith("estimator"):
            line = f"{where}: unknown estimator; allowed: " + ", ".join(
                f"{key} ({meaning})" for key, meaning in ESTIMATOR_MEANINGS.items()
            )
        elif kind in ("greater_than_equal", "less_than_equal", "finite_number"):
            line = f"{where}: must be a fraction between 0 and 1 ({msg}; 57.4% is 0.574)"
        else:
            line = f"{where}: {msg}"
        if kind == "value_error" and "\n" in msg:
            lines.extend(f"{where}: {part}" for part in msg.split("\n"))
        else:
            lines.append(line)
    return lines


def validate_submission(data: dict[str, Any], *, allow_reserved: bool = False) -> Submission:
    """Validate a decoded JSON object; raise `SubmissionRejected` listing every problem."""
    if not isinstance(data, dict):
        raise SubmissionRejected(["the file must hold one JSON object (a submission)"])
    try:
        submission = Submission.model_validate(data)
    except ValidationError as error:
        raise SubmissionRejected(_messages(error)) from None
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
            raise SubmissionRejected([f"the key {_short(key)} appears twice in one object"])
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


def build_submission(
    log_path: Path | str,
    submitter: str,
    notes: str = "",
    source: str = "local_run",
    created: datetime | None = None,
    *,
    provenance: str | None = None,
    superseded: str | None = None,
) -> Submission:
    """The submission of an experiment log (rows name their adversary strategy, prompt style and
    end-of-sequence policy), dated `created` (UTC), else when the log was last written.

    One result row per condition: MAJ and RRMaj accuracy as the run decided each question at
    M = M* (estimator "decisions", the numbers of the report's paired table and the Arena's
    result line), with Wilson 95% intervals over its finished questions. Agents are named by
    their weights (`rrdemo.report.models.result_model`: a served agent by its hub_id).
    `provenance` names what made the rows (default: the log's file name); `superseded`, when
    given, marks every row with that reason. Raises `SubmissionRejected` when the run cannot be
    one (a task that is not a benchmark, a served agent that does not name its weights,
    conditions of one row that differ in prompt style or end-of-sequence policy).
    """
    from rrdemo.report.paired import paired_by_condition

    log = read_log(log_path)
    _refuse_adaptive_turns(log.conditions.values())
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for c in log.conditions.values():
        key = (c["ensemble"], c["task"], c["strength"], c["k"], c["max_tokens"], c["n"], c["c"])
        first = seen.setdefault(key + (c["adversary"],), c)
        if _run_settings(first) != _run_settings(c):
            raise SubmissionRejected(
                [
                    f"{c['ensemble']} ({c['task']}, {c['strength']}, K = {c['k']}, c = {c['c']}) "
                    "ran under several prompt styles or end-of-sequence policies; a row names one "
                    "of each, so this log cannot be one submission"
                ]
            )
    decided = paired_by_condition(log)
    order = sorted(
        decided,
        key=lambda key: tuple(
            log.conditions[key][name]
            for name in ("ensemble", "task", "strength", "k", "max_tokens", "n", "adversary", "c")
        ),
    )
    results = []
    for key in order:
        cond, row = log.conditions[key], decided[key]
        agents = cond["config"]["agents"]
        try:
            models = [result_model(a) for a in agents]
        except UnnamedWeights as exc:
            raise SubmissionRejected([f"{cond['ensemble']} ({cond['task']}): {exc}"]) from None
        n = row.questions
        maj, rrmaj = round(row.maj * n), round(row.rrmaj * n)
        results.append(
            {
                "model": models[0],
                "model_revision": agents[0].get("revision"),
                "agent_models": models,
                "corrupted_agents": [i for i, a in enumerate(agents) if a["corrupted"]],
                "dataset": cond["task"],
                "strength": cond["strength"],
                "n_agents": cond["n"],
                "n_corrupted": cond["c"],
                "n_honest": cond["n"] - cond["c"],
                "k": cond["k"],
                "m": cond["m_star"],
                "max_tokens": cond["max_tokens"],
                "n_questions": n,
                "maj_accuracy": _frac(maj / n),
                "rrmaj_accuracy": _frac(rrmaj / n),
                "maj_ci": [_frac(x) for x in wilson95(maj, n)],
                "rrmaj_ci": [_frac(x) for x in wilson95(rrmaj, n)],
                "config_hash": cond["config_hash"],
                "adversary": cond["adversary"],
                **_run_settings(cond),
                "estimator": "decisions",
                "superseded": superseded,
                "maj_only": row.maj_only,
                "rrmaj_only": row.rrmaj_only,
            }
        )
    # Else when the run's log was last written: exporting one finished run twice gives one file.
    # A checkout does not keep a file's time, so the project's own runs pass the day they finished.
    if created is None:
        created = datetime.fromtimestamp(Path(log_path).stat().st_mtime, timezone.utc)
    elif created.tzinfo is None:
        created = created.replace(tzinfo=timezone.utc)
    data = {
        "schema_version": SCHEMA_VERSION,
        "submitter": submitter,
        "notes": notes,
        "source": source,
        "provenance": provenance or Path(log_path).name,
        "rrdemo_version": rrdemo.__version__,
        "created": created.isoformat(timespec="seconds"),
        "results": results,
    }
    return validate_submission(json.loads(json.dumps(data)), allow_reserved=True)


def _refuse_adaptive_turns(conditions: Iterable[dict[str, Any]]) -> None:
    """A board row is the paper's protocol, K tokens a turn: a log with another turn policy
    (`rrdemo.turns`, beyond the paper) is refused, naming it, rather than half-exported."""
    found = sorted({c.get("turn_policy") or "fixed" for c in conditions} - {"fixed"})
    if found:
        raise SubmissionRejected(
            [
                f"this log ran the turn policy {', '.join(found)}; a board row is the paper's "
                "fixed turns of K tokens, so only a log of fixed turns can be submitted (its "
                "report compares the policies: rrdemo report LOG)"
            ]
        )


def _run_settings(condition: dict[str, Any]) -> dict[str, str]:
    """The prompt style and end-of-sequence policy a logged condition ran with: its config's, or
    the setting's default (`rrdemo.config.BEYOND_PAPER`) when the config does not name it."""
    return {name: logged_setting(condition["config"], name) for name in STYLE_AND_POLICY}


def _frac(x: float) -> float:
    return float(min(1.0, max(0.0, round(x, 6))))
