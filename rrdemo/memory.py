"""A run's peak memory, estimated before anything loads, and the budget it must fit.

Each model's weights once and a KV cache per live sequence (`estimate_memory`), from each model's
shape (`rrdemo.backends.shape`); `check_memory` refuses a run over the budget
(`RRDEMO_MAX_MEMORY_GB`, read when called) with the estimate in its message. The other size
limits are in `rrdemo.limits`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rrdemo.errors import RRError

if TYPE_CHECKING:
    from rrdemo.backends.shape import ModelShape
    from rrdemo.config import RunConfig


MEMORY_ENV = "RRDEMO_MAX_MEMORY_GB"
# One run on a 16 GB CPU Space: 12 GB, leaving 4 GB for the app (Python, torch, gradio) and the OS.
DEFAULT_MEMORY_GB = 12.0
PROMPT_TOKENS = 512  # tokens an agent's own prompt (question, instructions, injection) may take
LLAMA_BYTES_PER_PARAM = 0.625  # a 4-5 bit GGUF (Q4_1, Q4_K_M): about 5 bits per weight
LLAMA_KV_BYTES = 2  # llama.cpp keeps keys and values in float16


def memory_budget(public: bool) -> int:
    """Bytes one run may take: `RRDEMO_MAX_MEMORY_GB` when set; else 12 GB for the web app
    (`public`) and the machine's memory for the command line (read when called)."""
    text = os.environ.get(MEMORY_ENV, "").strip()
    if text:
        try:
            value = float(text)
        except ValueError:
            value = 0.0
        if not value > 0 or math.isinf(value):
            raise RRError(f"{MEMORY_ENV} must be a positive number of GB, got {text!r}")
        return int(value * 1e9)
    if public:
        return int(DEFAULT_MEMORY_GB * 1e9)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not a POSIX system
        return int(DEFAULT_MEMORY_GB * 1e9)


@dataclass(frozen=True)
class MemoryEstimate:
    """A run's peak memory: each model's weights once, and the KV caches of its live sequences."""

    weights: int = 0  # bytes
    kv: int = 0  # bytes
    sequences: int = 0  # KV caches alive at once (transformers); llama.cpp's fixed contexts aside
    tokens: int = 0  # the longest of them, in tokens

    @property
    def total(self) -> int:
        return self.weights + self.kv

    def text(self) -> str:
        caches = f"KV caches {gb(self.kv)}"
        if self.sequences:
            caches += f" for {self.sequences} sequences of up to {self.tokens} tokens"
        return f"about {gb(self.total)} (weights {gb(self.weights)}, {caches})"


def gb(size: float) -> str:
    return f"{size / 1e9:.1f} GB"


def _speakers(config: RunConfig, count: int) -> int:
    """How many of `count` agents of one model take a turn in one RR trajectory (each keeps its
    own cache of it): at most one per turn, and a trajectory has at most ceil(L/K) turns that
    write K tokens (L when a turn may end early or pass)."""
    fixed = config.eos_policy == "end" and not config.turn.adaptive
    turns = math.ceil(config.max_tokens / config.k) if fixed else config.max_tokens
    return min(count, turns)


def estimate_memory(
    config: RunConfig,
    shapes: Mapping[tuple, ModelShape | None],
    *,
    methods: Sequence[str] = ("MAJ", "RRMaj"),
    maj_samples: int | None = None,
    default_dtype: str = "float32",
    prompt_tokens: int = PROMPT_TOKENS,
) -> MemoryEstimate:
    """The peak memory of one `run_question` of `config`, from each agent model's shape
    (`shapes[(model, revision, backend, dtype)]`; None: not known here, not counted).

    transformers (`rrdemo.backends.hf`): weights in the agent's dtype; every sequence keeps its
    KV cache until the run ends: each MAJ answer, and in each of the M RR trajectories one per
    agent that has taken a turn in it, each up to the prompt plus L tokens. llama.cpp: about 5
    bits per weight, and the fixed context it allocates when it loads. Served agents take no
    memory here."""
    from rrdemo.backends.shape import DTYPE_BYTES

    agents: dict[tuple, list[int]] = {}
    for index, spec in enumerate(config.agents):
        key = (spec.model, spec.revision, spec.backend, spec.dtype)
        agents.setdefault(key, []).append(index)
    n, length = config.n, prompt_tokens + config.max_tokens
    samples = maj_samples or n
    weights = kv = sequences = 0
    for key, seats in agents.items():
        shape, backend, dtype = shapes.get(key), key[2], key[3] or default_dtype
        if shape is None or backend == "served":
            continue
        if backend == "llamacpp":
            from rrdemo.backends.llamacpp import N_CTX_SEQ, N_SEQ_MAX

            cells = _whole(os.environ.get("RRDEMO_LLAMA_N_CTX"), N_CTX_SEQ) * _whole(
                os.environ.get("RRDEMO_LLAMA_SEQS"), N_SEQ_MAX
            )
            weights += int(shape.params * LLAMA_BYTES_PER_PARAM)
            kv += cells * shape.kv_bytes_per_token(LLAMA_KV_BYTES)
            continue
        size = DTYPE_BYTES.get(dtype, 4)
        live = 0
        if "MAJ" in methods:  # answer j is written by agent j mod N
            live += sum(1 for j in range(samples) if j % n in seats)
        if "RRMaj" in methods:
            live += config.resolved_m * _speakers(config, len(seats))
        weights += shape.params * size
        kv += live * length * shape.kv_bytes_per_token(size)
        sequences += live
    return MemoryEstimate(weights, kv, sequences, length if sequences else 0)


def resident_bytes(backend: Any, shape: ModelShape | None) -> int:
    """The memory a loaded model keeps while it stays loaded: its weights as they are in memory
    (transformers), or its file and the fixed context it allocated (llama.cpp: the buffers it
    reported making, else the KV cells its shape declares); 0 when nothing says (a served
    model)."""
    model = getattr(backend, "model", None)
    parameters = getattr(model, "parameters", None)
    if callable(parameters):
        return sum(p.numel() * p.element_size() for p in parameters())
    path = getattr(backend, "path", None)
    size = os.path.getsize(path) if path is not None and os.path.isfile(path) else 0
    context = getattr(backend, "context_bytes", None)  # what llama.cpp said it allocated
    cells = getattr(backend, "n_ctx_seq", 0) * getattr(backend, "n_seq_max", 0)
    if size and context:
        size += context
    elif size and shape is not None:  # its KV cells, from the model's declared shape
        size += cells * shape.kv_bytes_per_token(LLAMA_KV_BYTES)
    return size


def _whole(text: str | None, default: int) -> int:
    return int(text) if text and text.strip().isdigit() else default


def check_memory(
    configs: Iterable[RunConfig],
    models: Any,
    *,
    public: bool,
    methods: Sequence[str] = ("MAJ", "RRMaj"),
    maj_samples: int | str | None = None,
    budget: int | None = None,
) -> MemoryEstimate:
    """Refuse (RRError naming the estimate, the budget and its variable), before anything is
    loaded, the runs of `configs` whose peak memory (`estimate_memory`) is over `budget`
    (default `memory_budget(public)`); returns the largest estimate. Models the source keeps
    loaded that these runs do not use count too: the least recently used are unloaded until
    they and the run fit the budget together. Each model's shape comes
    from `models.shape(name, revision)` (`ModelPool.shape`; sources without it count nothing).
    `maj_samples` None: N answers, or "M" for M (the experiment runner's MAJ@M)."""
    from rrdemo.backends.choice import placement

    budget = memory_budget(public) if budget is None else budget
    shape = getattr(models, "shape", None)
    shapes: dict[tuple, ModelShape | None] = {}
    worst = MemoryEstimate()
    default_dtype: str | None = None
    configs_seen: list[RunConfig] = []
    for config in configs:
        configs_seen.append(config)
        for spec in config.agents:
            key = (spec.model, spec.revision, spec.backend, spec.dtype)
            if key not in shapes:
                local = spec.backend != "served" and shape is not None
                shapes[key] = shape(spec.model, spec.revision) if local else None
        if default_dtype is None:
            default_dtype = placement()[1] if any(shapes.values()) else "float32"
        samples = config.resolved_m if maj_samples == "M" else maj_samples
        estimate = estimate_memory(
            config, shapes, methods=methods, maj_samples=samples, default_dtype=default_dtype
        )
        if estimate.total > worst.total:
            worst = estimate
    if worst.total > budget:
        raise RRError(
            f"this run would take {worst.text()} of memory, over the limit of {gb(budget)} "
            f"({MEMORY_ENV}); use fewer agents, a smaller M or L, or a smaller model"
        )
    _make_room(models, configs_seen, worst.total, budget)
    return worst


def _make_room(models: Any, configs: Sequence[RunConfig], need: int, budget: int) -> None:
    """Stop keeping the loaded models these runs do not use, least recently used first, until
    the run's estimate `need` and what stays loaded fit the budget together (`ModelPool.kept`;
    sources without it keep nothing)."""
    kept = getattr(models, "kept", None)
    if kept is None:
        return
    others = kept([spec for config in configs for spec in config.agents])
    held = sum(size for _, size in others)
    for key, size in others:
        if need + held <= budget:
            break
        models.unload(key)
        held -= size
