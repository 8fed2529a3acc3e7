"""The experiment runner: a sweep of tasks x ensembles x strengths x K, logged trajectory by trajectory.

    python -m rrdemo.experiment --tasks logic3,gsm8k --configs 0c5t,1c4t,3c2t,5c0t \\
        --strengths strong --k 32 --m-star 5 --max-tokens 128 --n 16 --out runs/small.jsonl

One *condition* is a task and a `RunConfig` (agents, strength, K, L, M = M*). For every question of
the task, `run_question` produces the condition's pools: M* RR trajectories (RRMaj) and M* MAJ
answers (answer j from agent j mod N), on the same question, agents, target and seed. The
analyses later sample M <= M* of them (the pool design of the paper's appendix D).

The log is JSONL, appended and flushed as the run goes:
  * a header line: the format tag and the full, normalised sweep;
  * one "trajectory" line per MAJ answer / RR trajectory as it finishes (each chunk with its agent
    and role, the answer, correct, fooled, last speaker, tokens);
  * one "done" line per (condition, question) unit with both votes and the compute used.
A killed run resumes from the same command: the log is cut back to its last "done" line, so a
half-finished unit is redone from scratch and nothing is lost or counted twice.
"""

from __future__ import annotations

import itertools
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rrdemo.config import (
    ADVERSARIES,
    EOS_POLICIES,
    PAPER_DEFAULTS,
    PROMPT_STYLES,
    STRENGTHS,
    AgentSpec,
    RunConfig,
    Sampling,
    homogeneous_agents,
    parse_ct,
)
from rrdemo.errors import RRError
from rrdemo.events import (
    AnswerExtracted,
    ChunkWritten,
    ComputeUsed,
    Decision,
    RunStarted,
    TrajectoryStarted,
    Vote,
)
from rrdemo.tasks.base import Question, Task
from rrdemo.turns import DEFAULT_ENTROPY_THRESHOLD, TURN_POLICIES, validate_turn_settings

LOG_FORMAT = "rrdemo-experiment"
LOG_VERSION = 1
SCALING_MS: tuple[int, ...] = (1, 5, 10, 20, 30, 40)  # the paper's M grid (appendix D)
SOURCES = ("auto", "offline", "hub")

# The sweep's settings with their defaults: the paper's (N = 5, K = 100, 128 questions). K, L,
# order and sampling come from `PAPER_DEFAULTS` (rrdemo.config): L = 512 is our choice, >= N x K so
# every agent can speak (the paper never states L; its appendix D only says most logic problems need
# fewer than 5 x 500 tokens), and the order is a seeded shuffle per trajectory.
DEFAULTS: dict[str, Any] = {
    "tasks": ["logic3"],
    "models": ["smollm2"],  # homogeneous ensembles are built for each model
    "configs": [],  # "3c2t" labels; empty with no ensembles = every c for N = n_agents
    "n_agents": 5,
    "ensembles": [],  # explicit ensembles: [[{"model": ..., "corrupted": true}, ...], ...]
    "corrupted_first": True,  # homogeneous ensembles: corrupted agents take the first seats
    "strengths": ["moderate", "strong"],
    "custom_template": None,
    "k": [PAPER_DEFAULTS.k],  # K values (the K ablation sweeps several)
    "m_star": None,  # M*: pool size per condition; None = N (the paper's main tables use M = N)
    "max_tokens": PAPER_DEFAULTS.max_tokens,  # L
    "n": 128,  # questions per task
    "seed": PAPER_DEFAULTS.seed,  # question sample, sampling, targets and tie-breaks all derive from it
    "temperature": PAPER_DEFAULTS.temperature,
    "top_p": PAPER_DEFAULTS.top_p,
    "order": PAPER_DEFAULTS.order,  # "shuffled": a seeded speaking order per trajectory
    "source": "auto",
    # engine of local GGUF models: transformers, llamacpp or auto (rrdemo.engines.choice.choose_backend);
    # the CLI and the app ask for auto. Left out of the logged sweep when transformers.
    "backend": "transformers",
    # Settings added later; the normalised sweep (the log header) names them only when they differ
    # from these defaults, so logs written before they existed still resume.
    "adversaries": ["static"],  # adversary strategies swept (rrdemo.adversary)
    "eos_policy": "end",  # what a writer's end-of-sequence does in RR: end | pass
    "prompt_style": "direct",  # direct | step-by-step
    "turn_policies": [
        "fixed"
    ],  # RR turn policies swept (rrdemo.turns): fixed, sentence, uncertainty
    "k_min": None,  # K_min of adaptive turns; None = max(1, K // 4)
    "entropy_threshold": DEFAULT_ENTROPY_THRESHOLD,  # nats, the uncertainty policy's hand-over
}
LATER_SETTINGS: dict[str, Any] = {
    "adversaries": ["static"],
    "eos_policy": "end",
    "prompt_style": "direct",
    "turn_policies": ["fixed"],
    "k_min": None,
    "entropy_threshold": DEFAULT_ENTROPY_THRESHOLD,
}


# -- the sweep ------------------------------------------------------------------------------------
def _threshold(value: Any) -> float:
    try:
        threshold = float(value)
    except (TypeError, ValueError):
        raise RRError(
            f"the entropy threshold must be a positive number of nats, got {value!r}"
        ) from None
    validate_turn_settings("fixed", None, 1, threshold)
    return threshold


def _as_list(value: Any, what: str) -> list:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    raise RRError(f"{what} must be a list or a comma-separated string, got {value!r}")


def _int(value: Any, what: str, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise RRError(f"{what} must be a whole number, got {value!r}")
    try:
        number = int(value)
    except ValueError:
        raise RRError(f"{what} must be a whole number, got {value!r}") from None
    if number < low:
        raise RRError(f"{what} must be at least {low}, got {number}")
    return number


def parse_ensemble(text: str) -> list[dict]:
    """`"smollm2*,smollm2,gemma3-270m"` -> agents in seat order; a trailing `*` marks corrupted."""
    agents = []
    for part in [p.strip() for p in text.split(",")]:
        if not part.rstrip("*"):
            raise RRError(
                f"ensemble {text!r}: empty agent; write models separated by commas, "
                "a trailing * marks a corrupted agent (e.g. smollm2*,smollm2,gemma3-270m)"
            )
        agents.append({"model": part.rstrip("*"), "corrupted": part.endswith("*")})
    return agents


def normalize_sweep(raw: dict[str, Any]) -> dict[str, Any]:
    """Fill defaults, check every value, and return the canonical sweep dict (what the header logs)."""
    unknown = sorted(set(raw) - set(DEFAULTS))
    if unknown:
        raise RRError(
            f"unknown sweep setting(s): {', '.join(unknown)}; allowed: {', '.join(DEFAULTS)}"
        )
    from rrdemo.tasks import canonical_name  # noqa: PLC0415 - keep `import rrdemo.experiment` light

    s = {**DEFAULTS, **{k: v for k, v in raw.items() if v is not None}}
    tasks = [canonical_name(t) for t in _as_list(s["tasks"], "tasks")]
    if not tasks or "custom" in tasks:
        raise RRError(
            "a sweep needs at least one benchmark task (custom questions cannot be swept)"
        )
    strengths = _as_list(s["strengths"], "strengths")
    for strength in strengths:
        if strength not in STRENGTHS:
            raise RRError(
                f"unknown corruption strength {strength!r}; allowed: {', '.join(STRENGTHS)}"
            )
    if not strengths:
        raise RRError("give at least one corruption strength (moderate, strong)")
    ensembles = [
        parse_ensemble(e) if isinstance(e, str) else e
        for e in _as_list(s["ensembles"], "ensembles")
    ]
    for agents in ensembles:
        if not isinstance(agents, list) or not all(
            isinstance(a, dict) and isinstance(a.get("model"), str) for a in agents
        ):
            raise RRError(
                "each ensemble must be a list of agents like {model: smollm2, corrupted: true}"
            )
    configs = [str(c).strip() for c in _as_list(s["configs"], "configs")]
    n_agents = _int(s["n_agents"], "n_agents (N)")
    if not configs and not ensembles:
        configs = [f"{c}c{n_agents - c}t" for c in range(n_agents + 1)]
    for label in configs:
        c, t = parse_ct(label)
        if c + t < 1:
            raise RRError(f"config {label!r} has no agents; c + t must be at least 1")
        if raw.get("n_agents") is not None and c + t != n_agents:
            raise RRError(f"config {label!r} does not add up: c + t = {c + t}, but N = {n_agents}")
    m_star = None if s["m_star"] is None else _int(s["m_star"], "M* (m_star)")
    later = {
        "adversaries": list(dict.fromkeys(_as_list(s["adversaries"], "adversaries"))),
        "eos_policy": s["eos_policy"],
        "prompt_style": s["prompt_style"],
        "turn_policies": list(dict.fromkeys(_as_list(s["turn_policies"], "turn_policies"))),
        "k_min": None if s["k_min"] is None else _int(s["k_min"], "K_min (k_min)"),
        "entropy_threshold": _threshold(s["entropy_threshold"]),
    }
    for policy in later["turn_policies"]:
        if policy not in TURN_POLICIES:
            raise RRError(f"unknown turn policy {policy!r}; allowed: {', '.join(TURN_POLICIES)}")
    if not later["turn_policies"]:
        raise RRError(f"give at least one turn policy ({', '.join(TURN_POLICIES)})")
    for name, allowed in (("eos_policy", EOS_POLICIES), ("prompt_style", PROMPT_STYLES)):
        if later[name] not in allowed:
            raise RRError(f"unknown {name} {later[name]!r}; allowed: {', '.join(allowed)}")
    for adversary in later["adversaries"]:
        if adversary not in ADVERSARIES:
            raise RRError(
                f"unknown adversary strategy {adversary!r}; allowed: {', '.join(ADVERSARIES)}"
            )
    if not later["adversaries"]:
        raise RRError(f"give at least one adversary strategy ({', '.join(ADVERSARIES)})")
    if s["source"] not in SOURCES:
        raise RRError(f"unknown data source {s['source']!r}; allowed: {', '.join(SOURCES)}")
    backends = ("auto", "transformers", "llamacpp")
    if s["backend"] not in backends:
        raise RRError(f"unknown backend {s['backend']!r}; allowed: {', '.join(backends)}")
    engine = {} if s["backend"] == "transformers" else {"backend": s["backend"]}
    return {
        "tasks": list(dict.fromkeys(tasks)),
        "models": [str(m) for m in _as_list(s["models"], "models")] if configs else [],
        "configs": list(dict.fromkeys(configs)),
        "n_agents": n_agents,
        "ensembles": [
            [{"model": str(a["model"]), "corrupted": bool(a.get("corrupted", False))} for a in e]
            for e in ensembles
        ],
        "corrupted_first": bool(s["corrupted_first"]),
        "strengths": list(dict.fromkeys(strengths)),
        "custom_template": s["custom_template"],
        "k": list(dict.fromkeys(_int(k, "K") for k in _as_list(s["k"], "K"))),
        "m_star": m_star,
        "max_tokens": _int(s["max_tokens"], "L (max_tokens)"),
        "n": _int(s["n"], "n (questions per task)"),
        "seed": _int(s["seed"], "seed", low=0),
        "temperature": float(s["temperature"]),
        "top_p": float(s["top_p"]),
        "order": s["order"],
        "source": s["source"],
        **engine,  # absent for transformers: logs written before engines existed still resume
        **{key: value for key, value in later.items() if value != LATER_SETTINGS[key]},
    }


LAST_TAG = " [corrupted-last]"  # the seat-layout tag of homogeneous corrupted-last ensembles


def ensemble_name(agents: Sequence[AgentSpec], corrupted_first: bool = True) -> str:
    """What the tables call an ensemble: one name for all c of the same ensemble and seat layout.

    A homogeneous ensemble is its model (`qwen`), tagged when its corrupted agents sit in the last
    seats (`qwen [corrupted-last]`); with c = 0 or c = N both layouts are the same, and the name
    follows the sweep's layout (`corrupted_first`) so that the sweep's rows stay one ensemble.
    Anything else spells out every seat (`*` = corrupted), e.g. `smollm2*,gemma3-270m`.
    """
    models = {a.model for a in agents}
    n, c = len(agents), sum(a.corrupted for a in agents)
    if len(models) == 1:
        first = all(a.corrupted == (i < c) for i, a in enumerate(agents))
        last = all(a.corrupted == (i >= n - c) for i, a in enumerate(agents))
        if first and (corrupted_first or not last):
            return agents[0].model
        if last:
            return agents[0].model + LAST_TAG
    return ",".join(a.model + ("*" if a.corrupted else "") for a in agents)


@dataclass(frozen=True)
class Condition:
    """One cell of the sweep: a task and a complete RunConfig (with m = M*), and its questions."""

    task: Task
    config: RunConfig
    questions: tuple[Question, ...]
    corrupted_first: bool = True  # the sweep's seat layout (names c = 0 and c = N ensembles)

    @property
    def key(self) -> str:
        return f"{self.task.name}:{self.config.config_hash()}"

    def describe(self) -> dict[str, Any]:
        """The condition as the log header records it (the analyses group by these fields)."""
        cfg = self.config
        return {
            "key": self.key,
            "task": self.task.name,
            "config_hash": cfg.config_hash(),
            "ensemble": ensemble_name(cfg.agents, self.corrupted_first),
            "label": cfg.label,
            "n": cfg.n,
            "c": cfg.c,
            "t": cfg.t,
            "strength": cfg.strength,
            "k": cfg.k,
            "m_star": cfg.n_trajectories,
            "max_tokens": cfg.max_tokens,
            **({"adversary": cfg.adversary} if cfg.adversary != "static" else {}),
            **({"turn_policy": cfg.turn_policy} if cfg.turn_policy != "fixed" else {}),
            "config": cfg.to_dict(),
            "questions": [q.qid for q in self.questions],
        }


@dataclass(frozen=True)
class Plan:
    """Everything a sweep will run, validated before any model loads or any file is written."""

    sweep: dict[str, Any]
    conditions: tuple[Condition, ...]
    warnings: tuple[str, ...] = ()  # e.g. agents that can never write in a condition's RR runs

    @property
    def n_units(self) -> int:
        return sum(len(c.questions) for c in self.conditions)


def plan_sweep(raw: dict[str, Any], served: Collection[str] = ()) -> Plan:
    """Validate a sweep (unknown task, n larger than the set, a config that does not add up, ...)
    and expand it into conditions. Loads question data, never models. `served` names models
    answered by servers of an ensemble file (not in the model registry)."""
    from rrdemo.engines.choice import with_backends
    from rrdemo.engines.registry import resolve
    from rrdemo.tasks import get_task, load_questions  # noqa: PLC0415

    sweep = normalize_sweep(raw)
    ensembles: list[tuple[AgentSpec, ...]] = []
    for model in sweep["models"]:
        resolve(model)
        for label in sweep["configs"]:
            c, t = parse_ct(label)
            ensembles.append(homogeneous_agents(model, c + t, c, sweep["corrupted_first"]))
    for agents in sweep["ensembles"]:
        for a in agents:
            if a["model"] not in served:
                resolve(a["model"])
        ensembles.append(tuple(AgentSpec(a["model"], a["corrupted"]) for a in agents))
    if not ensembles:
        raise RRError("the sweep has no ensembles: give --configs with --model, or --ensemble")
    sampling = Sampling(sweep["temperature"], sweep["top_p"], sweep["seed"])
    conditions = []
    for name in sweep["tasks"]:
        task = get_task(name)
        questions = tuple(load_questions(name, sweep["n"], sweep["seed"], sweep["source"]))
        for agents in ensembles:
            for strength, k, adversary, policy in itertools.product(
                sweep["strengths"],
                sweep["k"],
                sweep.get("adversaries", ["static"]),
                sweep.get("turn_policies", ["fixed"]),
            ):
                config = RunConfig(
                    agents=agents,
                    strength=strength,
                    custom_template=sweep["custom_template"] if strength == "custom" else None,
                    k=k,
                    m=sweep["m_star"] or len(agents),
                    max_tokens=sweep["max_tokens"],
                    order=sweep["order"],
                    sampling=sampling,
                    eos_policy=sweep.get("eos_policy", "end"),
                    prompt_style=sweep.get("prompt_style", "direct"),
                    adversary=adversary,
                    **_turn_settings(sweep, policy),
                )
                config = with_backends(config, sweep.get("backend", "transformers"), served)
                conditions.append(Condition(task, config, questions, sweep["corrupted_first"]))
    keys = [c.key for c in conditions]
    if len(set(keys)) != len(keys):
        raise RRError("the sweep lists the same condition twice; remove the repeated config")
    return Plan(sweep, tuple(conditions), plan_warnings(conditions))


def _turn_settings(sweep: dict[str, Any], policy: str) -> dict[str, Any]:
    """RunConfig turn fields of one swept policy; a fixed one keeps the defaults (and its hash)."""
    if policy == "fixed":
        return {}
    return {
        "turn_policy": policy,
        "k_min": sweep.get("k_min"),
        "entropy_threshold": sweep.get("entropy_threshold", DEFAULT_ENTROPY_THRESHOLD),
    }


def plan_warnings(conditions: Sequence[Condition]) -> tuple[str, ...]:
    """One line per condition in which some agents can never write an RR chunk (L < N x K)."""
    from rrdemo.speakers import silence_warning  # noqa: PLC0415

    warnings = []
    for c in conditions:
        text = silence_warning(c.config, [q.qid for q in c.questions])
        if text:
            cfg = c.config
            warnings.append(
                f"{c.task.name} {ensemble_name(cfg.agents)} {cfg.label} K={cfg.k}: {text}"
            )
    return tuple(dict.fromkeys(warnings))


# -- the log --------------------------------------------------------------------------------------
def header_for(plan: Plan) -> dict[str, Any]:
    return {
        "type": "header",
        "format": LOG_FORMAT,
        "version": LOG_VERSION,
        "sweep": plan.sweep,
        "conditions": [c.describe() for c in plan.conditions],
    }


def _dump(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


@dataclass
class LogScan:
    """What an existing log holds: its header, finished units and where the last one ends."""

    header: dict[str, Any]
    done: set[tuple[str, str]] = field(default_factory=set)  # (condition key, question id)
    keep_bytes: int = 0  # the log is cut back to here on resume


def parse_log_line(path: Path, number: int, line: bytes) -> Any:
    """One JSONL line of a run log; a clear RRError when it is not JSON (line 1: not a log)."""
    try:
        return json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        if number == 1:
            raise RRError(f"{path} is not an rrdemo experiment log (line 1 is not JSON)") from None
        raise RRError(f"{path}: line {number} is not valid JSON; the log is damaged") from None


def scan_log(path: Path) -> LogScan:
    """Read a log written by `run_plan`; RRError for a file that is not one (or is damaged).

    A last line without its newline is a write cut short by a kill and is ignored.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RRError(f"cannot read {path}: {exc.strerror}") from None
    lines = raw.split(b"\n")
    complete = lines[:-1]  # the piece after the last newline is empty or a cut-short write
    if not complete:
        raise RRError(f"{path} is not an rrdemo experiment log (it is empty or has no header)")
    scan: LogScan | None = None
    offset = 0
    for number, line in enumerate(complete, start=1):
        offset += len(line) + 1
        record = parse_log_line(path, number, line)
        if number == 1:
            if not (
                isinstance(record, dict)
                and record.get("type") == "header"
                and record.get("format") == LOG_FORMAT
            ):
                raise RRError(
                    f"{path} is not an rrdemo experiment log (line 1 has no {LOG_FORMAT} header)"
                )
            if record.get("version") != LOG_VERSION:
                raise RRError(
                    f"{path}: log format version {record.get('version')!r} is not supported "
                    f"(this rrdemo reads version {LOG_VERSION})"
                )
            scan = LogScan(record, keep_bytes=offset)
            continue
        kind = record.get("type") if isinstance(record, dict) else None
        if kind not in ("trajectory", "done"):
            raise RRError(f"{path}: line {number} is not a trajectory or done record")
        if kind == "done":
            scan.done.add((record.get("condition"), record.get("question_id")))
            scan.keep_bytes = offset
    return scan


class LogWriter:
    """Appends records to the log, one write per line, flushed at once; locked against a second run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            import fcntl  # noqa: PLC0415 - POSIX only; elsewhere the log is simply not locked

            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:
            pass
        except OSError:
            os.close(self._fd)
            raise RRError(
                f"{path} is being written by another run; wait for it or use another --out"
            ) from None

    def write(self, record: dict, sync: bool = False) -> None:
        os.write(self._fd, _dump(record))
        if sync:
            os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)


def open_log(path: Path, plan: Plan) -> tuple[LogWriter, set[tuple[str, str]]]:
    """Start a new log, or resume an existing one written by the same sweep (cut to its last unit)."""
    header = header_for(plan)
    if path.exists():
        scan = scan_log(path)
        if (
            scan.header.get("sweep") != plan.sweep
            or scan.header.get("conditions") != header["conditions"]
        ):
            raise RRError(
                f"{path} holds a different sweep; rerun with the same settings to resume it, "
                "or choose another --out for this one"
            )
        writer = LogWriter(path)
        os.truncate(path, scan.keep_bytes)  # drop a half-finished unit; it is redone below
        return writer, scan.done
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_dump(header))
    return LogWriter(path), set()


# -- running --------------------------------------------------------------------------------------
def unit_records(condition: Condition, question: Question, events: Iterable) -> Iterator[dict]:
    """Turn one question's event stream into log records: a trajectory record as each MAJ answer
    or RR trajectory finishes, then the unit's "done" record with votes and compute."""
    task, base = condition.task, {"condition": condition.key, "question_id": question.qid}
    key = getattr(task, "vote_key", lambda a: a)
    chunks: dict[tuple[str, int], list[dict]] = defaultdict(list)
    orders: dict[tuple[str, int], list[int]] = {}
    target, votes, compute = None, {}, {}
    for event in events:
        if isinstance(event, RunStarted):
            target = event.target
        elif isinstance(event, TrajectoryStarted):
            orders[(event.method, event.trajectory)] = list(event.order)
        elif isinstance(event, ChunkWritten):
            chunks[(event.method, event.trajectory)].append(
                {
                    "turn": event.turn,
                    "agent": event.agent,
                    "role": "corrupted" if event.corrupted else "truthful",
                    "model": event.model,
                    "text": event.text,
                    "n_tokens": event.n_tokens,
                }
            )
        elif isinstance(event, AnswerExtracted):
            yield {
                "type": "trajectory",
                **base,
                "method": event.method,
                "trajectory": event.trajectory,
                "order": orders.get((event.method, event.trajectory), []),
                "chunks": chunks.pop((event.method, event.trajectory), []),
                "answer": event.answer,
                "vote_key": key(event.answer) if event.answer is not None else None,
                "correct": event.correct,
                "fooled": event.fooled,
                "last_agent": event.last_agent,
                "last_corrupted": event.last_corrupted,
                "n_tokens": event.n_tokens,
                "finish_reason": event.finish_reason,
                "gold": question.gold,
                "target": target,
            }
        elif isinstance(event, Vote):
            votes.setdefault(event.method, {}).update(
                counts=event.counts, abstained=event.abstained
            )
        elif isinstance(event, Decision):
            votes.setdefault(event.method, {}).update(
                answer=event.answer,  # readable; `key` is the vote key it won under
                key=event.key,
                correct=event.correct,
                fooled=event.fooled,
                tied=list(event.tied),
            )
        elif isinstance(event, ComputeUsed):
            compute[event.method] = {
                "decode_tokens": event.decode_tokens,
                "prefill_tokens": event.prefill_tokens,
                "wall_s": event.wall_s,
                "per_agent": event.per_agent,
            }
    yield {
        "type": "done",
        **base,
        "gold": question.gold,
        "target": target,
        "votes": votes,
        "compute": compute,
    }


@dataclass
class RunSummary:
    units_total: int
    units_skipped: int  # already in the log when the run started
    units_run: int
    decode_tokens: int
    wall_s: float


def run_plan(
    plan: Plan,
    log_path: Path | str,
    models: Any,
    *,
    progress: bool = True,
    on_unit: Callable[[int], None] | None = None,
) -> RunSummary:
    """Run every (condition, question) unit not yet in the log, appending records as they finish.

    `models` is anything with `get(name, revision)` (a `ModelPool`, or a fake in tests).
    `on_unit(i)` is called after the i-th unit of this call is safely written.
    """
    from rrdemo.protocols import run_question  # noqa: PLC0415

    writer, done = open_log(Path(log_path), plan)
    todo = [(c, q) for c in plan.conditions for q in c.questions if (c.key, q.qid) not in done]
    skipped = plan.n_units - len(todo)
    bar = None
    if progress:
        from tqdm import tqdm  # noqa: PLC0415

        bar = tqdm(
            total=plan.n_units, initial=skipped, unit="q", desc="questions", dynamic_ncols=True
        )
    start, decoded = time.perf_counter(), 0
    try:
        for i, (condition, question) in enumerate(todo, start=1):
            events = run_question(
                condition.config,
                question,
                condition.task,
                models,
                maj_samples=condition.config.n_trajectories,
            )
            for record in unit_records(condition, question, events):
                writer.write(record, sync=record["type"] == "done")
                if record["type"] == "done":
                    decoded += sum(c["decode_tokens"] for c in record["compute"].values())
            if bar is not None:
                rate = decoded / max(time.perf_counter() - start, 1e-9)
                bar.set_postfix_str(
                    f"{rate:.1f} tok/s, {condition.task.name} {condition.config.label}"
                )
                bar.update(1)
            if on_unit is not None:
                on_unit(i)
    finally:
        writer.close()
        if bar is not None:
            bar.close()
    return RunSummary(plan.n_units, skipped, len(todo), decoded, time.perf_counter() - start)


def load_sweep_file(path: Path | str) -> dict[str, Any]:
    """A sweep from a YAML or JSON file whose keys are the settings in `DEFAULTS`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RRError(f"cannot read the sweep file {path}: {exc}") from None
    try:
        if path.suffix.lower() == ".json":
            data = json.loads(text)
        else:
            import yaml  # noqa: PLC0415

            data = yaml.safe_load(text)
    except Exception as exc:  # noqa: BLE001 - any parse error is the user's file, said plainly
        raise RRError(
            f"the sweep file {path} cannot be parsed: {str(exc).splitlines()[0]}"
        ) from None
    if not isinstance(data, dict):
        raise RRError(
            f"the sweep file {path} must hold a mapping of settings ({', '.join(DEFAULTS)})"
        )
    return data


def main(argv: list[str] | None = None) -> int:
    """`python -m rrdemo.experiment ...`: the same as `rrdemo experiment ...`."""
    import argparse  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from rrdemo.cli.experiment import add_arguments, handler  # noqa: PLC0415

    parser = argparse.ArgumentParser(
        prog="python -m rrdemo.experiment", description=__doc__.split("\n")[0]
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return handler(args)
    except RRError as exc:
        print(f"rrdemo experiment: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
