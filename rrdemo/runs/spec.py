"""The sweep's plan of conditions (its settings and their checks: `rrdemo.runs.sweep`).

One *condition* is a task and a `RunConfig` (agents, strength, K, L, M = M*). For every question of
the task, the runner (`rrdemo.runs.runner`) produces the condition's pools: M* RR trajectories
(RRMaj) and M* MAJ answers (answer j from agent j mod N), on the same question, agents, target and
seed. The analyses later sample M <= M* of them (the pool design of the paper's appendix D).
`plan_sweep` checks a sweep whole (`rrdemo.runs.sweep.normalize_sweep`) before any model loads
and builds one condition per value of each listed setting.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from rrdemo.backends.choice import with_backends
from rrdemo.backends.registry import resolve
from rrdemo.config import AgentSpec, RunConfig, Sampling, beyond_paper
from rrdemo.errors import RRError
from rrdemo.events import METHODS, Method
from rrdemo.limits import limits
from rrdemo.runs.sweep import normalize_sweep, sweep_size, swept_keys
from rrdemo.seats import homogeneous_agents, parse_ct
from rrdemo.speakers import silence_warning
from rrdemo.tasks import get_task, load_questions
from rrdemo.tasks.base import Question, Task
from rrdemo.tasks.data import sample_questions

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
    methods: tuple[Method, ...] = METHODS  # what each unit runs (both, or one: `METHOD_CHOICE`)

    @property
    def key(self) -> str:
        return condition_key(self.task.name, self.config)

    def describe(self) -> dict[str, Any]:
        """The condition as the log header records it (the analyses group by these fields)."""
        qids = [q.qid for q in self.questions]
        described = describe_condition(self.task.name, self.config, qids, self.corrupted_first)
        if self.methods != METHODS:
            described["methods"] = list(self.methods)
        return described


def condition_key(task: str, config: RunConfig) -> str:
    """What names a condition in the log: `task:config_hash`."""
    return f"{task}:{config.config_hash()}"


def describe_condition(
    task: str, config: RunConfig, question_ids: Sequence[str], corrupted_first: bool = True
) -> dict[str, Any]:
    """A condition as the log header records it: its key, what the tables group by, its whole
    config and its questions (also how rrdemo.runs.convert rebuilds an older header)."""
    cfg = config
    return {
        "key": condition_key(task, cfg),
        "task": task,
        "config_hash": cfg.config_hash(),
        "ensemble": ensemble_name(cfg.agents, corrupted_first),
        "label": cfg.label,
        "n": cfg.n,
        "c": cfg.c,
        "t": cfg.t,
        "strength": cfg.strength,
        "k": cfg.k,
        "m_star": cfg.resolved_m,
        "max_tokens": cfg.max_tokens,
        **{s.name: getattr(cfg, s.name) for s in beyond_paper() if s.sweep == "many"},
        "config": cfg.to_dict(),
        "questions": list(question_ids),
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


def plan_sweep(
    raw: dict[str, Any],
    served: Collection[str] | Mapping[str, AgentSpec] = (),
    units_limit: str = "units",
) -> Plan:
    """Validate a sweep (unknown task, n larger than the set, a config that does not add up, a
    size over its limit, ...) and expand it into conditions. Loads question data, never models.
    `served` names models answered by servers (an ensemble file's or a sweep file's endpoints;
    not in the model registry), which `models` and explicit ensembles may name; as a mapping, each
    name's seat (`rrdemo.ensemble.ServedAgent.seat`: the hub id and revision it serves) gives its
    agents theirs. `units_limit` is the limit (`rrdemo.limits.Limits` field) on the sweep's units:
    the web app asks for its own, "web_units"."""
    sweep = normalize_sweep(raw)
    bounds = limits()
    conditions_count, units = sweep_size(sweep)
    bounds.check("conditions", conditions_count, "the number of the sweep's conditions")
    for name in dict.fromkeys(("units", units_limit)):
        bounds.check(name, units, "the number of the sweep's question runs (condition x question)")
    ensembles: list[tuple[AgentSpec, ...]] = []
    counts: list[int] = []  # questions per ensemble: n, or its config's n_by_config
    for model in sweep["models"]:
        if model not in served:
            resolve(model)
        for label in sweep["configs"]:
            c, t = parse_ct(label)
            ensembles.append(homogeneous_agents(model, c + t, c, sweep["corrupted_first"]))
            counts.append(sweep.get("n_by_config", {}).get(label, sweep["n"]))
    for agents in sweep["ensembles"]:
        for a in agents:
            if a["model"] not in served:
                resolve(a["model"])
        ensembles.append(tuple(AgentSpec(a["model"], a["corrupted"]) for a in agents))
        counts.append(sweep["n"])
    if not ensembles:
        raise RRError("the sweep has no ensembles: give --configs with --models, or --ensemble")
    ensembles = [_seated(agents, served, sweep.get("dtype")) for agents in ensembles]
    sampling = Sampling(sweep["temperature"], sweep["top_p"], sweep["seed"])
    used = calibration_questions(sweep.get("calibration", []))
    swept = swept_keys()
    conditions = []
    for name in sweep["tasks"]:
        task = get_task(name)
        questions = tuple(held_out_questions(name, sweep, used.get(name, set())))
        for agents, count in zip(ensembles, counts, strict=True):
            # no agent reads an injection: one strength runs it, the others would repeat it
            injected = any(a.corrupted for a in agents)
            strengths = sweep["strengths"] if injected else sweep["strengths"][:1]
            for strength, k, *values in itertools.product(
                strengths, sweep["k"], *(sweep[key] for key in swept.values())
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
                    **_beyond(sweep, dict(zip(swept, values, strict=True))),
                )
                config = with_backends(config, sweep["backend"], served)
                conditions.append(
                    Condition(
                        task,
                        config,
                        questions[:count],
                        sweep["corrupted_first"],
                        tuple(sweep.get("methods", METHODS)),
                    )  # fmt: skip
                )
    keys = [c.key for c in conditions]
    if len(set(keys)) != len(keys):
        raise RRError("the sweep lists the same condition twice; remove the repeated config")
    warnings = plan_warnings(conditions) + calibration_warnings(
        sweep.get("calibration", []), [a for agents in ensembles for a in agents]
    )
    return Plan(sweep, tuple(conditions), warnings)


def _seated(
    agents: tuple[AgentSpec, ...], served: Collection[str] | Mapping[str, AgentSpec], dtype
) -> tuple[AgentSpec, ...]:
    """Served seats as their server's seat says (hub id, revision); local ones in `dtype`."""
    seats = served if isinstance(served, Mapping) else {}
    return tuple(
        replace(seats[a.model], corrupted=a.corrupted)
        if a.model in seats
        else a
        if a.model in served or dtype is None
        else replace(a, dtype=dtype)
        for a in agents
    )


def calibration_questions(paths: Sequence[str]) -> dict[str, set[str]]:
    """Per task, the question ids the named calibration logs used."""
    from rrdemo.calibration.log import split_of

    used: dict[str, set[str]] = {}
    for path in paths:
        for task, qids in split_of(path).items():
            used.setdefault(task, set()).update(qids)
    return used


def calibration_warnings(paths: Sequence[str], agents: Sequence[AgentSpec]) -> tuple[str, ...]:
    """One line per calibration log that measured none of the sweep's models: its questions are
    still held out, but its ceiling and obedience describe other models than this run's."""
    from rrdemo.calibration.log import read_calibration_header

    names = {a.model for a in agents} | {a.hub_id for a in agents if a.hub_id}
    warnings = []
    for path in paths:
        measured = read_calibration_header(path).get("settings", {}).get("models") or []
        if measured and not names & set(measured):
            warnings.append(
                f"the calibration {path} measured {', '.join(measured)}, but this sweep runs "
                f"{', '.join(sorted({a.model for a in agents}))}: its questions are held out, "
                "but its ceiling and obedience say nothing about these models"
            )
    return tuple(warnings)


def held_out_questions(name: str, sweep: dict[str, Any], used: set[str]) -> list[Question]:
    """The sweep's n questions of task `name`: a seeded sample of the whole set, or, when a
    calibration is named, of the questions it did not use."""
    if not used:
        return load_questions(name, sweep["n"], sweep["seed"], sweep["source"])
    pool = [
        q for q in load_questions(name, None, sweep["seed"], sweep["source"]) if q.qid not in used
    ]
    if sweep["n"] > len(pool):
        raise RRError(
            f"{name}: asked for {sweep['n']} held-out questions, but only {len(pool)} remain "
            f"once the calibration's {len(used)} are set aside; lower n"
        )
    return sample_questions(pool, sweep["n"], sweep["seed"])


def check_held_out(question_ids: dict[str, Collection[str]], used: dict[str, set[str]]) -> None:
    """RRError naming the questions (per task) that a calibration used: selection and evidence
    never share a question."""
    shared = {
        task: sorted(set(qids) & used.get(task, set())) for task, qids in question_ids.items()
    }
    shared = {task: qids for task, qids in shared.items() if qids}
    if shared:
        listed = "; ".join(
            f"{t}: {', '.join(q[:5])}{' ...' if len(q) > 5 else ''}" for t, q in shared.items()
        )
        count = sum(len(q) for q in shared.values())
        raise RRError(
            f"{count} question(s) were used by the named calibration ({listed}): an evidence run "
            "must not use them; start a new --out (its questions are then drawn held out)"
        )


def _beyond(sweep: dict[str, Any], chosen: dict[str, Any]) -> dict[str, Any]:
    """RunConfig's settings beyond the paper for one condition: the swept ones `chosen`, the rest
    as the sweep says; a setting the condition does not read keeps its default (the fixed turn
    rule reads neither K_min nor the threshold: one config for it, whatever the sweep says)."""
    values = {
        s.name: chosen.get(s.name, sweep.get(s.name)) for s in beyond_paper() if s.sweep != "none"
    }
    return {
        s.name: values[s.name] for s in beyond_paper() if s.name in values and s.applies(values)
    }


def plan_warnings(conditions: Sequence[Condition]) -> tuple[str, ...]:
    """One line per condition in which some agents can never write an RR chunk (L < N x K)."""
    warnings = []
    for c in conditions:
        text = silence_warning(c.config, [q.qid for q in c.questions])
        if text:
            cfg = c.config
            warnings.append(
                f"{c.task.name} {ensemble_name(cfg.agents)} {cfg.label} K={cfg.k}: {text}"
            )
    return tuple(dict.fromkeys(warnings))
