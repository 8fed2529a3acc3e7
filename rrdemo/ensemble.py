"""Ensemble files: which agents run, on which backend (local transformers or a served endpoint).

An ensemble file (YAML or JSON) lists the agents, optionally named endpoints they share, and
optional run settings. `load_ensemble(path)` validates it into an `Ensemble`: a `RunConfig`
(agents by name, so logs, hashes and the leaderboard are unchanged) plus the served agents'
connection settings. `Ensemble.register(pool)` builds one `OpenAIBackend` per served model name and
puts it into a `ModelPool`, so `run_question` finds it like any local model; local agents load
lazily from the same pool.

    run: {strength: strong, k: 100, max_tokens: 512, sampling: {temperature: 0.7, seed: 0}}
    endpoints:
      vllm: {base_url: "http://10.0.0.5:8000/v1", api_key_env: VLLM_API_KEY,
             served_model: llama70b, hub_id: meta-llama/Llama-3.3-70B-Instruct}
    agents:
      - {model: smollm2, corrupted: true, count: 2}          # local (the default backend)
      - {backend: openai, endpoint: vllm, model: llama70b, count: 3}

`hub_id` (and `revision`) name the weights the server runs: they are part of the served agents'
seats (`AgentSpec.hub_id`, `.revision`), so exports and the paper tables group served rows with
local and paper rows of the same model. A sweep file's `endpoints:` go through `served_endpoints`:
each endpoint serves a model named after it, which the sweep's `models:` may name.

API keys are never in the file: `api_key_env` names the environment variable that holds one, read
when the backend is built, and kept out of configs, hashes, events and logs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from rrdemo.backends.endpoint import Endpoint
from rrdemo.backends.openai import PROMPT_FORMATS, OpenAIBackend
from rrdemo.backends.registry import REGISTRY
from rrdemo.config import SERVED, AgentSpec, RunConfig, Sampling, beyond_paper
from rrdemo.errors import RRError
from rrdemo.files import read_settings_file
from rrdemo.limits import limits
from rrdemo.settings import known_keys, true_or_false, whole_number

# Where an ensemble file's agent runs (its `backend` key): "local", a model this process loads on
# an engine of `rrdemo.config.BACKENDS`, or "openai", a model an OpenAI-compatible server serves.
AGENT_KINDS = ("local", "openai")
# The run settings a file's `run` names: the paper's, then every setting beyond the paper.
PAPER_RUN_KEYS = ("strength", "custom_template", "k", "m", "max_tokens", "order", "sampling")
SAMPLING_KEYS = ("temperature", "top_p", "seed")
# a paper `run:` key (sampling's as "sampling.KEY") -> the sweep setting it is
# (rrdemo.runs.sweep.DEFAULTS); the settings beyond the paper come from their declarations
PAPER_RUN_SETTINGS = {
    "strength": "strengths",
    "custom_template": "custom_template",
    "k": "k",
    "m": "m_star",
    "max_tokens": "max_tokens",
    "order": "order",
    "sampling.temperature": "temperature",
    "sampling.top_p": "top_p",
    "sampling.seed": "seed",
}
ENDPOINT_KEYS = tuple(f.name for f in fields(Endpoint))
LOCAL_KEYS = ("model", "corrupted", "revision", "count", "backend", "dtype")
# what an endpoint (or a served agent inline) may say besides the connection settings
SERVED_MODEL_KEYS = ("tokenizer", "prompt_format", "max_context", "hub_id", "revision")
SERVED_KEYS = (
    "model",
    "corrupted",
    "count",
    "backend",
    "endpoint",
    *SERVED_MODEL_KEYS,
    *ENDPOINT_KEYS,
)
TOP_KEYS = ("agents", "endpoints", "run")
_UNSET = object()


@dataclass(frozen=True)
class ServedAgent:
    """How to reach the model that served agents named `name` use (no secrets here)."""

    name: str  # AgentSpec.model of the agents it serves, as shown in events
    endpoint: Endpoint
    # registry name / folder / hub id giving the chat template; None: the completion format
    tokenizer: str | None
    prompt_format: str = "auto"
    max_context: int | None = None
    hub_id: str | None = None  # the weights the server runs (hub id), for results
    revision: str | None = None  # their hub revision (commit, tag or branch)

    def describe(self) -> str:
        """Where the model is served and which weights it is (for the CLI's plan)."""
        weights = (
            f"weights {self.hub_id}" + (f" at revision {self.revision}" if self.revision else "")
            if self.hub_id
            else "weights not named (add hub_id: to export its results)"
        )
        return f"{self.name}: {self.endpoint.served_model!r} at {self.endpoint.url}, {weights}"

    def seat(self, corrupted: bool = False) -> AgentSpec:
        """One seat of this served model, naming its weights when the file does."""
        return AgentSpec(self.name, corrupted, self.revision, SERVED, self.hub_id)

    def build(self) -> OpenAIBackend:
        """The backend for these agents (reads the API key variable now)."""
        return OpenAIBackend(
            self.name,
            self.endpoint,
            tokenizer=self.tokenizer,
            prompt_format=self.prompt_format,
            max_context=self.max_context,
        )


@dataclass(frozen=True)
class Ensemble:
    """A validated ensemble file: the run config and the served agents' connection settings."""

    config: RunConfig
    served: Mapping[str, ServedAgent]  # by model name; local agents need no entry
    source: str = "<ensemble>"
    # the run settings the file's `run:` block gives, by `run_sweep_keys()` name (sampling's as
    # "sampling.temperature"); the rest of `config` is RunConfig's defaults
    given: tuple[str, ...] = ()

    def sweep_settings(self) -> dict[str, Any]:
        """The file's run as sweep settings (rrdemo.runs.spec): what its `run:` block gives and
        RunConfig's defaults for the rest (the strong injection alone, where a sweep has both);
        a setting a sweep lists several values of, as a list of its one value."""
        cfg = self.config
        keys = run_sweep_keys()
        values = {
            "strength": [cfg.strength],
            "custom_template": cfg.custom_template,
            "k": [cfg.k],
            "m": cfg.m,
            "max_tokens": cfg.max_tokens,
            "order": cfg.order,
            "sampling.temperature": cfg.sampling.temperature,
            "sampling.top_p": cfg.sampling.top_p,
            "sampling.seed": cfg.sampling.seed,
        }
        for s in beyond_paper():
            if s.name in keys:
                value = getattr(cfg, s.name)
                values[s.name] = [value] if s.sweep == "many" else value
        return {keys[key]: values[key] for key in keys}

    @property
    def agents(self) -> tuple[AgentSpec, ...]:
        """The seats, for callers that build their own RunConfig from CLI flags."""
        return self.config.agents

    def register(self, pool) -> list[OpenAIBackend]:
        """Build each served model's backend once and `pool.put` it; returns the new backends.

        Nothing touches the network here; a backend checks its server on its first request.
        """
        backends = [served.build() for served in self.served.values()]
        for backend in backends:
            pool.put(backend)
        return backends

    def describe(self) -> str:
        """One line per seat: model, role and where it runs (for CLI output and logs)."""
        lines = []
        for i, spec in enumerate(self.config.agents):
            role = "corrupted" if spec.corrupted else "honest"
            served = self.served.get(spec.model)
            where = (
                f"served {served.endpoint.served_model!r} at {served.endpoint.url}"
                if served
                else "local"
            )
            lines.append(f"agent {i}: {spec.model} ({role}, {where})")
        return "\n".join(lines)


def load_ensemble(path: str | Path) -> Ensemble:
    """Read and validate an ensemble file (.yaml, .yml or .json); RRError says what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise RRError(f"ensemble file {str(path)!r} does not exist")
    if path.suffix.lower() not in (".json", ".yaml", ".yml"):
        raise RRError(
            f"ensemble file {path.name} must end in .yaml, .yml or .json, got {path.suffix!r}"
        )
    data = read_settings_file(path, "ensemble file")
    return ensemble_from_dict(data, source=str(path))


def ensemble_from_dict(data: Any, source: str = "<ensemble>") -> Ensemble:
    """Validate an already parsed ensemble document (a mapping) into an `Ensemble`."""
    where = Path(source).name
    if not isinstance(data, Mapping):
        raise RRError(f"{where}: an ensemble must be a mapping with an 'agents' list")
    known_keys(data, TOP_KEYS, f"{where}")
    endpoints = _endpoints(data.get("endpoints"), where)
    agents_raw = data.get("agents")
    if not isinstance(agents_raw, list) or not agents_raw:
        raise RRError(f"{where}: 'agents' must be a non-empty list of agents")

    specs: list[AgentSpec] = []
    served: dict[str, ServedAgent] = {}
    local_names: set[str] = set()
    for position, raw in enumerate(agents_raw, start=1):
        label = f"{where}: agent #{position}"
        if not isinstance(raw, Mapping):
            raise RRError(f"{label} must be a mapping such as {{model: smollm2, corrupted: true}}")
        backend = raw.get("backend", "local")
        if backend not in AGENT_KINDS:
            raise RRError(
                f"{label}: backend must be one of {', '.join(AGENT_KINDS)}, got {backend!r}"
            )
        count = whole_number(raw.get("count", 1), f"{label}: count", minimum=1)
        # the seats are counted before any is built: `count: 999999999` builds nothing
        limits().check("agents", len(specs) + count, f"{where}: the number of agents")
        corrupted = true_or_false(raw.get("corrupted", False), f"{label}: corrupted")
        if backend == "local":
            known_keys(raw, LOCAL_KEYS, label)
            model = _text(raw.get("model"), f"{label}: model")
            revision = _optional_text(raw.get("revision"), f"{label}: revision")
            dtype = _optional_text(raw.get("dtype"), f"{label}: dtype")
            if model in served:
                raise RRError(f"{label}: {model!r} is already the name of a served agent")
            local_names.add(model)
            specs += [AgentSpec(model, corrupted, revision, dtype=dtype)] * count
            continue
        known_keys(raw, SERVED_KEYS, label)
        agent = _served_agent(raw, endpoints, label)
        if agent.name in local_names:
            raise RRError(
                f"{label}: {agent.name!r} is already a local agent's model; give the served "
                f"agent its own name with `model:`, e.g. {agent.name + '@server'!r}"
            )
        if agent.name in served and served[agent.name] != agent:
            raise RRError(
                f"{label}: another served agent named {agent.name!r} has different settings; "
                "agents with different endpoints need different `model:` names"
            )
        served[agent.name] = agent
        specs += [agent.seat(corrupted)] * count

    run = data.get("run") or {}
    if not isinstance(run, Mapping):
        raise RRError(f"{where}: 'run' must be a mapping of run settings")
    known_keys(run, (*PAPER_RUN_KEYS, *(s.name for s in beyond_paper())), f"{where}: run")
    config = RunConfig(agents=tuple(specs), **_run_settings(run, f"{where}: run"))
    given = [key for key in run_sweep_keys() if key in run]
    if isinstance(run.get("sampling"), Mapping):
        given += [f"sampling.{key}" for key in SAMPLING_KEYS if key in run["sampling"]]
    return Ensemble(config, served, source, tuple(given))


def run_sweep_keys() -> dict[str, str]:
    """Each `run:` key a sweep can take over (sampling's as "sampling.KEY") -> its sweep setting:
    the paper's (`PAPER_RUN_SETTINGS`), then every setting beyond the paper a sweep sets, under
    its sweep key (read when called, off the declarations)."""
    beyond = {s.name: s.sweep_key for s in beyond_paper() if s.sweep != "none"}
    return {**PAPER_RUN_SETTINGS, **beyond}


def served_endpoints(endpoints: Any, source: str = "<sweep>") -> dict[str, ServedAgent]:
    """A sweep file's `endpoints:`, each the served model named after it (what `models:` and an
    explicit ensemble's seats may name), validated as an ensemble file's endpoints are."""
    where = Path(source).name
    endpoints = _endpoints(endpoints, where)
    return {
        str(name): _served_agent(
            {"endpoint": name, "model": str(name)}, endpoints, f"{where}: endpoint {name!r}"
        )
        for name in endpoints
    }


def _endpoints(endpoints: Any, where: str) -> Mapping:
    """A file's `endpoints:` mapping, each endpoint's keys checked."""
    endpoints = endpoints or {}
    if not isinstance(endpoints, Mapping):
        raise RRError(f"{where}: 'endpoints' must map names to endpoint settings")
    for name, settings in endpoints.items():
        if not isinstance(settings, Mapping):
            raise RRError(f"{where}: endpoint {name!r} must be a mapping of settings")
        known_keys(settings, (*ENDPOINT_KEYS, *SERVED_MODEL_KEYS), f"{where}: endpoint {name!r}")
    return endpoints


def _served_agent(raw: Mapping, endpoints: Mapping, label: str) -> ServedAgent:
    settings: dict[str, Any] = {}
    if "endpoint" in raw:
        name = raw["endpoint"]
        if name not in endpoints:
            known = ", ".join(map(str, endpoints)) or "none defined"
            raise RRError(f"{label}: unknown endpoint {name!r} (endpoints: {known})")
        settings.update(endpoints[name])
    settings.update({k: v for k, v in raw.items() if k not in ("endpoint", "count", "corrupted")})
    if "base_url" not in settings:
        raise RRError(f"{label}: a served agent needs base_url (or endpoint: NAME)")
    served_model = settings.get("served_model") or settings.get("model")
    served_model = _text(served_model, f"{label}: served_model")
    name = _text(settings.get("model", served_model), f"{label}: model")
    kwargs: dict[str, Any] = {"base_url": _text(settings["base_url"], f"{label}: base_url")}
    kwargs["served_model"] = served_model
    if settings.get("api_key_env") is not None:
        kwargs["api_key_env"] = _text(settings["api_key_env"], f"{label}: api_key_env")
    for key in ("timeout_s", "connect_timeout_s", "backoff_s"):
        if key in settings:
            kwargs[key] = _number(settings[key], f"{label}: {key}")
    for key in ("retries", "concurrency"):
        if key in settings:
            kwargs[key] = whole_number(settings[key], f"{label}: {key}", minimum=0)
    for key in ("stream", "check_model"):
        if key in settings:
            kwargs[key] = true_or_false(settings[key], f"{label}: {key}")
    if "extra_body" in settings:
        if not isinstance(settings["extra_body"], Mapping):
            raise RRError(f"{label}: extra_body must be a mapping of request fields")
        kwargs["extra_body"] = dict(settings["extra_body"])
    try:
        endpoint = Endpoint(**kwargs)
    except RRError as exc:
        raise RRError(f"{label}: {exc}") from None
    hub_id = _optional_text(settings.get("hub_id"), f"{label}: hub_id")
    revision = _optional_text(settings.get("revision"), f"{label}: revision")
    if revision is not None and hub_id is None:
        raise RRError(f"{label}: revision needs hub_id, the hub id of the model the server runs")
    tokenizer = settings.get("tokenizer", _UNSET)
    if tokenizer is _UNSET:
        tokenizer = _default_tokenizer(name, served_model, hub_id)
    elif tokenizer is not None:
        tokenizer = _text(tokenizer, f"{label}: tokenizer")
    prompt_format = settings.get("prompt_format", "auto")
    if prompt_format not in PROMPT_FORMATS:
        raise RRError(
            f"{label}: prompt_format must be one of {', '.join(PROMPT_FORMATS)}, got {prompt_format!r}"
        )
    if prompt_format == "chat" and tokenizer is None:
        raise RRError(f"{label}: prompt_format chat needs a tokenizer (hub id or local folder)")
    max_context = settings.get("max_context")
    if max_context is not None:
        max_context = whole_number(max_context, f"{label}: max_context", minimum=1)
        if tokenizer is None:
            raise RRError(f"{label}: max_context needs a tokenizer to count prompt tokens")
    return ServedAgent(name, endpoint, tokenizer, prompt_format, max_context, hub_id, revision)


def _default_tokenizer(name: str, served_model: str, hub_id: str | None) -> str | None:
    """Where the chat template comes from when the file does not say: a registry model, a hub
    id (org/name) or an existing folder among the agent's names and its weights' hub id;
    otherwise the completion format."""
    for candidate in filter(None, (name, served_model, hub_id)):
        if candidate in REGISTRY or "/" in candidate.strip("/") or Path(candidate).is_dir():
            return candidate
    return None


def _run_settings(run: Mapping, label: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("strength", "order", "custom_template"):
        if run.get(key) is not None:
            out[key] = _text(run[key], f"{label}: {key}")
    for key in ("k", "max_tokens"):
        if key in run:
            out[key] = whole_number(run[key], f"{label}: {key}", minimum=1)
    if run.get("m") is not None:
        out["m"] = whole_number(run["m"], f"{label}: m", minimum=1)
    for s in beyond_paper():
        if s.name in run:
            out[s.name] = s.parse(run[s.name], label)
    sampling = run.get("sampling")
    if sampling is not None:
        if not isinstance(sampling, Mapping):
            raise RRError(f"{label}: sampling must be a mapping (temperature, top_p, seed)")
        known_keys(sampling, SAMPLING_KEYS, f"{label}: sampling")
        values: dict[str, Any] = {}
        for key in ("temperature", "top_p"):
            if key in sampling:
                values[key] = _number(sampling[key], f"{label}: sampling.{key}")
        if "seed" in sampling:
            values["seed"] = whole_number(sampling["seed"], f"{label}: sampling.seed", minimum=0)
        out["sampling"] = Sampling(**values)
    return out


def _text(value: Any, label: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise RRError(f"{label} must be a non-empty text, got {value!r}")
    return value.strip()


def _optional_text(value: Any, label: str) -> str | None:
    return None if value is None else _text(value, label)


def _number(value: Any, label: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise RRError(f"{label} must be a non-negative number, got {value!r}")
    return float(value)
