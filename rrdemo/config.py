"""One small, hashable description of a run: who the agents are, how they are corrupted, how they write.

`RunConfig` is logged with every result; `config_hash()` names it. Building one validates it, so a
config that exists is a config that can run.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from typing import Literal, get_args

from rrdemo.errors import RRError
from rrdemo.limits import limits
from rrdemo.settings import (
    Setting,
    check_choice,
    declared,
    setting,
)
from rrdemo.turns import (
    DEFAULT_ENTROPY_THRESHOLD,
    TURN_POLICIES,
    TurnKind,
    TurnPolicy,
    default_k_min,
    validate_turn_settings,
)

# Each choice once, as a type; the tuples of allowed values are read from it.
Strength = Literal["none", "moderate", "strong", "custom"]
Order = Literal["fixed", "shuffled"]
EosPolicy = Literal["end", "pass"]
PromptStyle = Literal["direct", "step-by-step"]
Adversary = Literal["static", "contextual", "last-word"]
STRENGTHS: tuple[str, ...] = get_args(Strength)
ORDERS: tuple[str, ...] = get_args(Order)
EOS_POLICIES: tuple[str, ...] = get_args(EosPolicy)
PROMPT_STYLES: tuple[str, ...] = get_args(PromptStyle)
ADVERSARIES: tuple[str, ...] = get_args(Adversary)
BACKENDS: tuple[str, ...] = ("transformers", "llamacpp")  # engines that run a local model
BACKEND_CHOICES: tuple[str, ...] = (
    "auto",
    *BACKENDS,
)  # what a run asks for (rrdemo.backends.choice)
ADAPTIVE: tuple[str, ...] = tuple(p for p in TURN_POLICIES if p != "fixed")  # read K_min
SERVED = "openai"  # AgentSpec.backend of an agent an OpenAI-compatible server answers
# What transformers may load a model's weights in (AgentSpec.dtype); None picks by hardware
DTYPES: tuple[str, ...] = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class AgentSpec:
    """One agent: which model writes for it and whether its prompt is corrupted."""

    model: str  # registry name ("smollm2"), hub id ("Qwen/Qwen2.5-0.5B-Instruct") or local folder
    corrupted: bool = False
    revision: str | None = None  # hub revision (commit, tag or branch); None = default branch
    # engine of a local model: "transformers", or "llamacpp" for a GGUF file (see docs/backends.md);
    # SERVED for an agent a server answers (rrdemo.ensemble), so its config is never a local one's
    backend: str = "transformers"
    # A served agent's weights: the hub id its server runs (its `revision` is that model's), so
    # results group with local and paper rows of the same model; None for local agents, whose
    # `model` names their weights.
    hub_id: str | None = None
    # The dtype transformers loads the weights in (one of DTYPES); None: bfloat16 (else float16)
    # on a GPU, float32 on CPU. It changes the text, so a chosen one is part of the hash.
    dtype: str | None = None

    def __post_init__(self) -> None:
        check_choice(self.backend, "backend", (*BACKENDS, SERVED))
        if self.dtype is not None:
            check_choice(self.dtype, "dtype", DTYPES)
            if self.backend != "transformers":
                raise RRError(
                    f"dtype {self.dtype} is a transformers setting; the {self.backend} engine runs "
                    "a GGUF file as it is quantized (use --backend transformers)"
                )


OPTIONAL_AGENT_FIELDS = ("hub_id", "dtype")  # AgentSpec fields a config names only when set

MAX_SEED = 2**31 - 1  # seeds reach numpy, torch and llama.cpp (32-bit), with room for offsets


@dataclass(frozen=True)
class Sampling:
    """Decoding settings, shared by every agent. temperature 0 means greedy."""

    temperature: float = setting(
        0.7, "temperature", "sampling temperature; 0 is greedy", beyond=False, arena=False
    )
    top_p: float = setting(0.95, "top-p", "nucleus sampling mass", beyond=False, arena=False)
    seed: int = setting(
        0,
        "seed",
        "every random choice of a run (sampling, target, agent order) derives from it",
        beyond=False,
        arena=False,
    )

    def __post_init__(self) -> None:
        if not 0 <= self.temperature <= 5:
            raise RRError(f"temperature must be between 0 and 5, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise RRError(f"top-p must be in (0, 1], got {self.top_p}")
        if not 0 <= self.seed <= MAX_SEED:
            raise RRError(f"the seed must be a whole number from 0 to {MAX_SEED}, got {self.seed}")


def ct_label(c: int, t: int) -> str:
    """The paper's name of a corruption setting: c corrupted, t honest agents -> `3c2t`."""
    return f"{c}c{t}t"


def rho_of(c: int, n: int) -> float:
    """The corruption ratio rho = c / N."""
    return c / n


class Composition:
    """The c:t composition of an ensemble: t, rho, the `3c2t` label and the rho band of anything
    with N agents (`n`) of which `c` are corrupted. A mixin without annotations, so neither dataclasses nor pydantic take fields
    from it."""

    @property
    def t(self) -> int:
        return self.n - self.c

    @property
    def rho(self) -> float:
        return rho_of(self.c, self.n)

    @property
    def label(self) -> str:
        """The paper's name of the corruption setting, e.g. `3c2t`."""
        return ct_label(self.c, self.t)

    @property
    def band(self) -> str | None:
        """Where rho falls in the paper's comparison of regimes (appendix C), compared exactly in
        integers: "minority" for 0 < rho <= 0.4 (1c4t, 2c3t at N = 5), "majority" for
        0.6 <= rho < 1 (3c2t, 4c1t), "bound" for the Ceiling (rho = 0) and the Floor (rho = 1),
        which are bounds rather than comparisons; None in between (0.4 < rho < 0.6)."""
        if self.c == 0 or self.c == self.n:
            return "bound"
        if 5 * self.c <= 2 * self.n:
            return "minority"
        if 5 * self.c >= 3 * self.n:
            return "majority"
        return None


@dataclass(frozen=True)
class RunConfig(Composition):
    """A complete, hashable description of one MAJ / RR / RRMaj run."""

    agents: tuple[
        AgentSpec, ...
    ]  # N agents in seat order; agent i writes turn t when order[t % N] == i
    # The paper's own settings: their front ends lay them out by hand (sliders, -L, a sweep's M*).
    strength: Strength = setting(
        "strong",
        "corruption strength",
        "the injection in the corrupted agents' prompts",
        paper="moderate, strong",
        beyond=False,
        sweep="many",
        many="strengths",
    )
    custom_template: str | None = setting(
        None,
        "custom template",
        'with strength "custom": the injection, with a {target} slot',
        beyond=False,
    )
    k: int = setting(
        100,
        "K",
        "tokens an agent writes per RR turn",
        paper=100,
        beyond=False,
        sweep="many",
        many="k",
    )
    m: int | None = setting(
        None,
        "M",
        "RR trajectories voted by RRMaj; none: M = N",
        paper="N",
        beyond=False,
        sweep="none",
    )
    max_tokens: int = setting(
        512, "L", "new tokens per trajectory (RR) and per answer (MAJ)", beyond=False
    )
    order: Order = setting(
        "shuffled",
        "speaking order",
        "RR speaking order: a seeded shuffle per trajectory, or seat order (fixed: agent t mod N "
        "writes turn t)",
        paper="fixed",
        beyond=False,
    )
    sampling: Sampling = field(default_factory=Sampling)
    # Beyond the paper: every front end derives its control from the declaration.
    eos_policy: EosPolicy = setting(
        "end",
        "end-of-sequence policy",
        "what a writer's end-of-sequence does in RR: end closes the trajectory; pass closes only "
        "the writer's turn, and the trajectory closes once N writers in a row pass (or at L)",
        label="End of sequence",
    )
    prompt_style: PromptStyle = setting(
        "direct",
        "prompt style",
        "direct: the task's prompt as is; step-by-step: it also asks for numbered reasoning "
        "steps before the final answer",
        paper="direct",
        calibrate="styles",
    )
    adversary: Adversary = setting(
        "static",
        "adversary strategy",
        "how corrupted agents play (docs/adversary.md): static, the injection (the paper's); "
        "contextual, also argue against the shared text and restate the target; last-word, a "
        "corrupted agent writes the last turn of a trajectory that runs to L",
        paper="static",
        label="Adversary",
        sweep="many",
        many="adversaries",
    )
    turn_policy: TurnKind = setting(
        "fixed",
        "turn policy",
        "how long an RR turn is (docs/turns.md): fixed, K tokens (the paper's); sentence, to the "
        "first sentence or line end after K_min tokens, at most K; uncertainty, until the "
        "writer's next-token entropy passes the threshold, after K_min tokens, at most K",
        paper="fixed",
        label="Turn length",
        sweep="many",
        many="turn_policies",
    )
    k_min: int | None = setting(
        None,
        "K_min",
        "fewest tokens of an adaptive turn; none: max(1, K // 4)",
        minimum=1,
        arena=False,
        only_with=("turn_policy", ADAPTIVE),
    )
    entropy_threshold: float = setting(
        DEFAULT_ENTROPY_THRESHOLD,
        "entropy threshold",
        "nats; the uncertainty policy's hand-over point",
        check=lambda nats: validate_turn_settings(None, 1, nats),
        arena=False,
        only_with=("turn_policy", ADAPTIVE),
    )
    meter: bool = setting(
        False,
        "truth meter",
        "after every RR turn (and at the same token counts of MAJ answers) an honest and a "
        "corrupted reader score the gold answer against the target: p_gold, p_target and "
        "z = logit(p_gold) - logit(p_target); costs extra compute (docs/theory.md)",
    )

    def __post_init__(self) -> None:
        n = len(self.agents)
        if n < 1:
            raise RRError("N must be at least 1 agent")
        bounds = limits()
        bounds.check("agents", n, "N (agents)")
        for s in declared(type(self)):
            if s.choices:
                check_choice(getattr(self, s.name), s.what, s.choices)
        if self.strength == "custom" and (
            not self.custom_template or "{target}" not in self.custom_template
        ):
            raise RRError("a custom corruption template must contain the slot {target}")
        if self.custom_template is not None:
            bounds.check(
                "template_chars", len(self.custom_template), "the custom template's length"
            )
        if self.k < 1:
            raise RRError(f"K (tokens per turn) must be at least 1, got {self.k}")
        if self.m is not None:
            if self.m < 1:
                raise RRError(f"M (RR trajectories) must be at least 1, got {self.m}")
            bounds.check("trajectories", self.m, "M (RR trajectories)")
        if self.max_tokens < 1:
            raise RRError(f"L (max new tokens) must be at least 1, got {self.max_tokens}")
        bounds.check("tokens", self.max_tokens, "L (max new tokens)")
        if self.max_tokens < self.k:
            raise RRError(f"L (max new tokens, {self.max_tokens}) must be at least K ({self.k})")
        validate_turn_settings(self.k_min, self.k, self.entropy_threshold)

    # -- the paper's notation -------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.agents)

    @property
    def resolved_m(self) -> int:
        """M, with `m` None meaning the paper's M = N (the field keeps None: it is logged and
        hashed as given)."""
        return self.m if self.m is not None else self.n

    @property
    def c(self) -> int:
        return sum(a.corrupted for a in self.agents)

    @property
    def corrupted_agents(self) -> tuple[int, ...]:
        return tuple(i for i, a in enumerate(self.agents) if a.corrupted)

    @property
    def turn(self) -> TurnPolicy:
        """The RR turn policy with K_min resolved (K_max is K)."""
        k_min = self.k_min if self.k_min is not None else default_k_min(self.k)
        return TurnPolicy(self.turn_policy, k_min, self.k, self.entropy_threshold)

    # -- logging --------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """Every field, in plain JSON types (lists, not tuples), so a logged config reads back equal.

        An agent's `OPTIONAL_AGENT_FIELDS` are written only when set: a config without them reads,
        logs and hashes as it did before they existed."""
        data = json.loads(json.dumps(asdict(self)))
        for agent in data["agents"]:
            for name in OPTIONAL_AGENT_FIELDS:
                if agent[name] is None:
                    del agent[name]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> RunConfig:
        try:
            agents = tuple(AgentSpec(**a) for a in data["agents"])
            sampling = Sampling(**data.get("sampling", {}))
            rest = {k: v for k, v in data.items() if k not in ("agents", "sampling")}
            return cls(agents=agents, sampling=sampling, **rest)
        except (KeyError, TypeError) as exc:
            raise RRError(f"not a run config: {exc}") from None

    def config_hash(self) -> str:
        """A short stable name of this exact configuration (sha256 of the canonical JSON of its
        fields, less the settings declared outside the hash)."""
        unhashed = {s.name for s in declared(type(self)) if not s.hashed}
        named = {k: v for k, v in self.to_dict().items() if k not in unhashed}
        blob = json.dumps(named, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def with_(self, **changes) -> RunConfig:
        return replace(self, **changes)


def field_defaults(cls: type) -> dict:
    return {f.name: f.default for f in fields(cls) if f.default is not MISSING}


def run_settings() -> tuple[Setting, ...]:
    """Every declared run setting: `RunConfig`'s, then `Sampling`'s (read when called, so a
    front end built now knows every field `RunConfig` has)."""
    return declared(RunConfig) + declared(Sampling)


def beyond_paper() -> tuple[Setting, ...]:
    """The settings beyond the paper (docs/adversary.md, docs/turns.md, docs/theory.md), whose
    front ends are all derived from their declarations."""
    return tuple(s for s in run_settings() if s.beyond)


# The settings beyond the paper with their defaults, which behave as the paper does: a config's
# description names one only when it differs from its default.
BEYOND_PAPER: dict[str, object] = {s.name: s.default for s in beyond_paper()}


# The two beyond-the-paper settings every logged condition's config carries onto what is read
# from it (board rows, the dataset, gallery entries): how agents are asked, what an end does.
STYLE_AND_POLICY = ("prompt_style", "eos_policy")


def logged_setting(config: dict, name: str) -> str:
    """A beyond-the-paper setting of a logged run's config as text: its default when the config
    (an older log's) does not name it."""
    value = config.get(name)
    return str(BEYOND_PAPER[name] if value is None else value)
