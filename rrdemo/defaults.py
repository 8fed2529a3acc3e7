"""Where the front ends start: the experiment's and the interactive defaults, read off `RunConfig`
and `Sampling` themselves, and what each offline model needs beyond them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields, replace

from rrdemo.config import AgentSpec, Composition, RunConfig, Sampling, field_defaults


@dataclass(frozen=True)
class Defaults(Composition):
    """The run settings a front end starts from, taken from `RunConfig` and `Sampling` themselves.

    Every default of K, L, order, strength, the prompt style and sampling lives in the two
    dataclasses above (the other settings beyond the paper start from their declarations); `EXPERIMENT_DEFAULTS` reads them, and the CLI flags, the experiment sweep
    and the Arena's controls all start from `EXPERIMENT_DEFAULTS` or `INTERACTIVE_DEFAULTS`, never from
    numbers of their own. `n` and `c` are the ensemble a front end offers first.
    """

    strength: str
    k: int  # K
    max_tokens: int  # L
    order: str
    prompt_style: str  # the one setting beyond the paper a model may need (`MODEL_DEFAULTS`)
    temperature: float
    top_p: float
    seed: int
    n: int = 5  # N agents, as in the paper's ensembles
    c: int = 3  # corrupted agents: 3c2t, the paper's headline slight majority (rho = 0.6)

    def for_models(self, models: Iterable[str], task: str | None = None) -> Defaults:
        """These defaults with what `MODEL_DEFAULTS` says the models need (registry names).

        Several models: step-by-step if any asks for it, the smallest K and the largest L, so
        every model gets a turn and room to finish. Models without an entry change nothing.
        """
        wanted = [
            MODEL_DEFAULTS[m.strip().lower()] for m in models if m.strip().lower() in MODEL_DEFAULTS
        ]
        if not wanted:
            return self
        changes: dict[str, object] = {}
        if any(w.prompt_style == "step-by-step" for w in wanted):
            changes["prompt_style"] = "step-by-step"
        ks = [w.k for w in wanted if w.k is not None]
        if ks:
            changes["k"] = min(ks)
        lengths = [w.length(task) for w in wanted if w.length(task) is not None]
        if lengths:
            changes["max_tokens"] = max(lengths)
        return replace(self, **changes)

    def run_config(self, agents: tuple[AgentSpec, ...], **given: object) -> RunConfig:
        """A config of these defaults for `agents`; `given` RunConfig or Sampling fields (the
        settings a user chose) replace the defaults."""
        settings = {f.name: getattr(self, f.name) for f in fields(self)}
        settings = {k: v for k, v in {**settings, **given}.items() if k not in ("n", "c")}
        sampling = {f.name: settings.pop(f.name) for f in fields(Sampling) if f.name in settings}
        return RunConfig(agents=agents, sampling=Sampling(**sampling), **settings)


EXPERIMENT_DEFAULTS = Defaults(
    **{
        key: value
        for key, value in {**field_defaults(RunConfig), **field_defaults(Sampling)}.items()
        if key in {f.name for f in fields(Defaults)}
    }
)
"""Where `rrdemo experiment` starts. K = 100 and M = N are the paper's; the rest is ours: the paper
has agent t mod N write turn t (`order="fixed"`) and states no L and no sampling temperature. We
take L = 512 (>= N x K for N = 5), a seeded shuffle of the speaking order per trajectory (the
paper's final-speaker shares fit a random order, docs/experiments.md) and temperature 0.7."""

INTERACTIVE_DEFAULTS = replace(EXPERIMENT_DEFAULTS, k=4, max_tokens=256)
"""The Arena's and `rrdemo run`'s start: K = 4, L = 256 (>= N x K up to N = 64). K is small
because the offline default model answers in a few tokens, so with K = 100 the agent that opens a
trajectory would write all of it; K = 4 keeps the paper's ratio of turn length to answer length
(measured in docs/app.md, "Defaults"). `--k 100` or the K slider gives the paper's K."""


@dataclass(frozen=True)
class ModelDefaults:
    """What one model needs for RR to happen in it, beyond the front ends' defaults.

    A model that answers in one sentence leaves nothing to interleave; these settings make it
    reason first (prompt style), give each agent a turn (K) and leave room for an uncorrupted
    answer to end before L (`max_tokens`, per task; "*" for the rest), as measured with
    `python -m tools.answer_lengths` (docs/models.md).
    """

    prompt_style: str | None = None
    k: int | None = None
    max_tokens: tuple[tuple[str, int], ...] = ()  # (task name or "*", L)

    def length(self, task: str | None) -> int | None:
        lengths = dict(self.max_tokens)
        return lengths.get((task or "*").lower(), lengths.get("*"))


# Per-model defaults of the interactive front ends (`rrdemo run`, the Arena), by registry name.
MODEL_DEFAULTS: dict[str, ModelDefaults] = {
    name: ModelDefaults(
        "step-by-step",
        k=16,
        max_tokens=(("logic3", 512), ("gsm8k", 512), ("aqua", 640), ("*", 640)),
    )
    for name in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
}
