"""A sweep's settings: their defaults, a sweep file, and the one check of them all.

A sweep is a dict of the settings in `defaults()`, given on the command line, in a YAML or JSON
file (`load_sweep_file`) or by the app; `normalize_sweep` checks it whole and gives the canonical
dict the log header records (`rrdemo.runs.spec.plan_sweep` then builds its conditions). Its
settings beyond the paper are read off their declarations (`rrdemo.config.beyond_paper`): a
"many" setting is listed under its plural key and every condition takes one of its values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rrdemo.backends.choice import BACKEND_CHOICES
from rrdemo.config import DTYPES, STRENGTHS, beyond_paper, ct_label
from rrdemo.defaults import EXPERIMENT_DEFAULTS
from rrdemo.errors import RRError
from rrdemo.events import METHODS
from rrdemo.files import read_settings_file
from rrdemo.limits import Limits, limits
from rrdemo.seats import parse_agents, parse_ct
from rrdemo.settings import (
    check_choice,
    known_keys,
    parse_sweep,
    sweep_defaults,
    true_or_false,
    whole_number,
)
from rrdemo.tasks import SOURCES, canonical_name

# The sweep's settings with their defaults: the paper's (N = 5, K = 100, 128 questions). K, L,
# order and sampling come from `EXPERIMENT_DEFAULTS` (rrdemo.config, read off `RunConfig`): L = 512 is
# our choice, >= N x K so every agent can speak (the paper never states L; its appendix D only says
# most logic problems need fewer than 5 x 500 tokens), and the order is a seeded shuffle per
# trajectory.
DEFAULTS: dict[str, Any] = {
    "tasks": ["logic3"],
    "models": ["smollm2"],  # homogeneous ensembles are built for each model
    "configs": [],  # "3c2t" labels; empty with no ensembles = every c for N = n_agents
    "n_agents": 5,
    "ensembles": [],  # explicit ensembles: [[{"model": ..., "corrupted": true}, ...], ...]
    "corrupted_first": True,  # homogeneous ensembles: corrupted agents take the first seats
    "strengths": ["moderate", "strong"],
    "custom_template": None,
    "k": [EXPERIMENT_DEFAULTS.k],  # K values (the K ablation sweeps several)
    "m_star": None,  # M*: pool size per condition; None = N (the paper's main tables use M = N)
    "max_tokens": EXPERIMENT_DEFAULTS.max_tokens,  # L
    "n": 128,  # questions per task
    "seed": EXPERIMENT_DEFAULTS.seed,  # question sample, sampling, targets and tie-breaks all derive from it
    "temperature": EXPERIMENT_DEFAULTS.temperature,
    "top_p": EXPERIMENT_DEFAULTS.top_p,
    "order": EXPERIMENT_DEFAULTS.order,  # "shuffled": a seeded speaking order per trajectory
    "source": "auto",
    # engine of local GGUF models: transformers, llamacpp or auto (rrdemo.backends.choice.choose_backend);
    # the CLI and the app ask for auto
    "backend": "transformers",
    # the dtype transformers loads local models in (rrdemo.config.DTYPES); None: by hardware
    "dtype": None,
}
# calibration logs (rrdemo calibrate) whose questions this sweep must not use: its questions are
# drawn from the rest of each task (held out), and a log holding one is refused
CALIBRATION: dict[str, Any] = {"calibration": []}
# questions per config where a config runs fewer than n: {"0c5t": 40} runs the first 40 of the
# task's n questions (the runner's question-major order) under 0c5t; the others run all n
COUNTS: dict[str, Any] = {"n_by_config": {}}
# which methods every unit runs: both (the default), or one. A sweep that varies only what RR
# reads (the end-of-sequence policy, say) pairs its RRMaj with another sweep's MAJ on the same
# questions and seeds, instead of decoding the same MAJ answers again (docs/experiments.md)
METHOD_CHOICE: dict[str, Any] = {"methods": list(METHODS)}
# what a sweep file may hold besides the settings: its served models, which the command line
# reads before the sweep is planned (rrdemo.cli.experiment.served_models, docs/serving.md)
FILE_ONLY_KEYS = ("endpoints",)


def defaults() -> dict[str, Any]:
    """Every sweep setting with its default: the sweep's own (`DEFAULTS`), then one key per
    setting beyond the paper (a list under the plural key of a "many" one), then the calibration
    and the per-config question counts."""
    return {
        **DEFAULTS, **sweep_defaults(beyond_paper()), **CALIBRATION, **COUNTS, **METHOD_CHOICE,
    }  # fmt: skip


# -- the sweep ------------------------------------------------------------------------------------
def _as_list(value: Any, what: str, bounds: Limits, limit: str = "sweep_values") -> list:
    """A list setting as a list (a comma-separated string is split), at most `limit` long."""
    if value is None:
        return []
    if isinstance(value, str):
        values = [v.strip() for v in value.split(",") if v.strip()]
        if not values:  # `--configs ''` is a slip, not a request for the default
            raise RRError(
                f"the list of {what} is empty ({value!r}): name at least one, or leave the "
                "setting out for its default"
            )
    elif isinstance(value, (list, tuple)):
        values = list(value)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        values = [value]  # one number (a UI field); whole_number checks it
    else:
        raise RRError(f"{what} must be a list or a comma-separated string, got {value!r}")
    bounds.check(limit, len(values), f"the number of {what}")
    return values


SEAT_KEYS = ("model", "corrupted")  # what a seat of a sweep's explicit ensemble says


def _seats(entry: Any, label: str, bounds: Limits) -> list[dict[str, Any]]:
    """One explicit ensemble's seats, checked as an ensemble file's agents are (the allowed keys,
    a true or false `corrupted`): agent-list text (`smollm2*, gemma3-270m`) or a list of seats."""
    if isinstance(entry, str):
        return [{"model": a.model, "corrupted": a.corrupted} for a in parse_agents(entry)]
    if not isinstance(entry, list):
        raise RRError(f"{label} must be a list of agents like {{model: smollm2, corrupted: true}}")
    bounds.check("agents", len(entry), f"{label}: the number of agents")
    seats = []
    for position, seat in enumerate(entry, start=1):
        where = f"{label}: agent #{position}"
        if not isinstance(seat, dict):
            raise RRError(f"{where} must be a mapping such as {{model: smollm2, corrupted: true}}")
        known_keys(seat, SEAT_KEYS, where)
        if not isinstance(seat.get("model"), str) or not seat["model"].strip():
            raise RRError(f"{where}: model must be a non-empty text, got {seat.get('model')!r}")
        corrupted = true_or_false(seat.get("corrupted", False), f"{where}: corrupted")
        seats.append({"model": seat["model"], "corrupted": corrupted})
    return seats


def _configs(
    s: dict[str, Any], explicit_n: bool, n_ensembles: int, bounds: Limits
) -> tuple[list[str], int]:
    """The `3c2t` labels and N, each label checked from its two integers before any agent is
    built; no labels and no ensembles means every c for N."""
    configs = [str(c).strip() for c in _as_list(s["configs"], "configs", bounds, "configs")]
    bounds.check("configs", len(configs) + n_ensembles, "the number of configs and ensembles")
    n_agents = whole_number(s["n_agents"], "n_agents (N)", minimum=1)
    if not configs and not n_ensembles:
        bounds.check("agents", n_agents, "n_agents (N)")  # before its N + 1 labels are written
        return [ct_label(c, n_agents - c) for c in range(n_agents + 1)], n_agents
    for label in configs:
        c, t = parse_ct(label)
        if c + t < 1:
            raise RRError(f"config {label!r} has no agents; c + t must be at least 1")
        bounds.check("agents", c + t, f"N (c + t) of config {label!r}")
        if explicit_n and c + t != n_agents:
            raise RRError(
                f"config {label!r} has N = c + t = {c + t} agents, but n_agents (--n-agents) "
                f"is {n_agents}; a label's c + t is its N, so leave n_agents out or make them agree"
            )
    return configs, n_agents


def normalize_sweep(raw: dict[str, Any]) -> dict[str, Any]:
    """Fill defaults, check every value, and return the canonical sweep dict (what the header logs).

    Every size is compared with its limit (`rrdemo.limits`) here, before anything is built."""
    allowed = defaults()
    unknown = sorted(set(raw) - set(allowed))
    if unknown:
        raise RRError(
            f"unknown sweep setting(s): {', '.join(unknown)}; allowed: {', '.join(allowed)}, "
            f"and in a sweep file {', '.join(FILE_ONLY_KEYS)}"
        )
    bounds = limits()
    s = {**allowed, **{k: v for k, v in raw.items() if v is not None}}
    tasks = [canonical_name(t) for t in _as_list(s["tasks"], "tasks", bounds)]
    if not tasks or "custom" in tasks:
        raise RRError(
            "a sweep needs at least one benchmark task (custom questions cannot be swept)"
        )
    strengths = _as_list(s["strengths"], "strengths", bounds)
    for strength in strengths:
        check_choice(strength, "corruption strength", STRENGTHS)
    if not strengths:
        raise RRError("give at least one corruption strength (moderate, strong)")
    ensembles = [
        _seats(e, f"ensemble #{i}", bounds)
        for i, e in enumerate(_as_list(s["ensembles"], "ensembles", bounds, "configs"), start=1)
    ]
    configs, n_agents = _configs(s, raw.get("n_agents") is not None, len(ensembles), bounds)
    m_star = None if s["m_star"] is None else whole_number(s["m_star"], "M* (m_star)", minimum=1)
    if m_star is not None:
        bounds.check("trajectories", m_star, "M* (m_star)")
    ks = [whole_number(k, "K", minimum=1) for k in _as_list(s["k"], "K values", bounds)]
    max_tokens = whole_number(s["max_tokens"], "L (max_tokens)", minimum=1)
    for length, what in ((max_tokens, "L (max_tokens)"), *((k, "K") for k in ks)):
        bounds.check("tokens", length, what)
    n = whole_number(s["n"], "n (questions per task)", minimum=1)
    bounds.check("questions", n, "n (questions per task)")
    counts = _counts(s["n_by_config"], configs, n)
    beyond = parse_sweep(beyond_paper(), s, lambda v, what: _as_list(v, what, bounds))
    calibration = [str(p) for p in _as_list(s["calibration"], "calibration logs", bounds)]
    check_choice(s["source"], "data source", SOURCES)
    check_choice(s["backend"], "backend", BACKEND_CHOICES)
    models = _as_list(s["models"], "models", bounds)
    methods = [str(m) for m in _as_list(s["methods"], "methods", bounds)]
    for method in methods:
        check_choice(method, "method", METHODS)
    methods = [m for m in METHODS if m in methods]  # the order a run goes through them
    return {
        "tasks": list(dict.fromkeys(tasks)),
        "models": [str(m) for m in models] if configs else [],
        "configs": list(dict.fromkeys(configs)),
        "n_agents": n_agents,
        "ensembles": ensembles,
        "corrupted_first": true_or_false(s["corrupted_first"], "corrupted_first"),
        "strengths": list(dict.fromkeys(strengths)),
        "custom_template": s["custom_template"],
        "k": list(dict.fromkeys(ks)),
        "m_star": m_star,
        "max_tokens": max_tokens,
        "n": n,
        "seed": whole_number(s["seed"], "seed", minimum=0),
        "temperature": float(s["temperature"]),
        "top_p": float(s["top_p"]),
        "order": s["order"],
        "source": s["source"],
        "backend": s["backend"],
        **beyond,
        # named only when given, so a sweep without one reads as it always did (committed logs)
        **({"calibration": calibration} if calibration else {}),
        **({"n_by_config": counts} if counts else {}),
        **({"dtype": _dtype(s["dtype"])} if s["dtype"] is not None else {}),
        **({"methods": methods} if methods != list(METHODS) else {}),
    }


def _counts(value: Any, configs: Sequence[str], n: int) -> dict[str, int]:
    """`n_by_config` checked: a mapping (or `0c5t=40,1c4t=40` text) from configs of the sweep to
    whole numbers from 1 to n, keyed by their canonical labels."""
    if isinstance(value, str):
        pairs = [p.strip() for p in value.split(",") if p.strip()]
        if not pairs:
            raise RRError(
                f"n_by_config is empty ({value!r}): give counts like 0c5t=40,1c4t=40, or leave "
                "it out so that every config runs n questions"
            )
        if any(p.count("=") != 1 for p in pairs):
            raise RRError(f"n_by_config must read like 0c5t=40,1c4t=40, got {value!r}")
        value = dict(p.split("=") for p in pairs)
    if not isinstance(value, Mapping):
        raise RRError(
            f"n_by_config must map configs to question counts, like {{0c5t: 40}}; got {value!r}"
        )
    counts: dict[str, int] = {}
    for label, count in value.items():
        c, t = parse_ct(str(label).strip())
        canonical = ct_label(c, t)
        if canonical not in configs:
            raise RRError(
                f"n_by_config names {label}, which is not one of the sweep's configs "
                f"({', '.join(configs) or 'none: give them with configs'})"
            )
        number = whole_number(count, f"n_by_config {canonical}", minimum=1)
        if number > n:
            raise RRError(
                f"n_by_config {canonical} is {number}, more than the sweep's n ({n}); a config "
                "runs at most the task's n questions"
            )
        if number < n:  # n itself is the default: not named, so the sweep reads the same
            counts[canonical] = number
    return counts


def _dtype(value: Any) -> str:
    check_choice(value, "dtype", DTYPES)
    return value


def sweep_size(sweep: dict[str, Any]) -> tuple[int, int]:
    """(conditions, units) a normalized sweep plans, counted from its lists before any is built."""
    ensembles = len(sweep["models"]) * len(sweep["configs"]) + len(sweep["ensembles"])
    conditions = len(sweep["tasks"]) * ensembles
    per_ensemble = len(sweep["tasks"])
    for name in ("strengths", "k", *swept_keys().values()):
        conditions *= len(sweep[name])
        per_ensemble *= len(sweep[name])
    counts = sweep.get("n_by_config", {})
    questions = len(sweep["models"]) * sum(counts.get(c, sweep["n"]) for c in sweep["configs"])
    return conditions, per_ensemble * (questions + len(sweep["ensembles"]) * sweep["n"])


def swept_keys() -> dict[str, str]:
    """The settings beyond the paper a sweep lists several values of: name -> sweep key."""
    return {s.name: s.many for s in beyond_paper() if s.sweep == "many"}


def load_sweep_file(path: Path | str) -> dict[str, Any]:
    """A sweep from a YAML or JSON file whose keys are the settings of `defaults()`."""
    path = Path(path)
    data = read_settings_file(path, "sweep file")
    if not isinstance(data, dict):
        raise RRError(
            f"the sweep file {path} must hold a mapping of settings "
            f"({', '.join([*defaults(), *FILE_ONLY_KEYS])})"
        )
    return data
