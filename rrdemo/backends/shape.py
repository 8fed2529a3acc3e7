"""A model's size as its `config.json` declares it: parameters, and the KV cache one token takes.

The memory budget (`rrdemo.memory.check_memory`) and the hub's size check
(`rrdemo.backends.hub_limits`) read a model's shape before anything is loaded: from the
published configs recorded here for the registry's models, from a local folder's `config.json`,
or from the hub's `config.json` at the checked commit. Parameters are counted from the
architecture (embeddings, attention, MLP or experts, norms), the way `model.num_parameters()`
counts a Llama/Qwen/SmolLM-style decoder: what transformers would allocate, whatever the weight
files hold.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rrdemo.errors import RRError

# Bytes per value of each dtype name a config or an agent may give.
DTYPE_BYTES: dict[str, int] = {
    "float32": 4,
    "float": 4,
    "float16": 2,
    "half": 2,
    "bfloat16": 2,
    "float8_e4m3fn": 1,
    "int8": 1,
}

# The published configs of the registry's models (the fields a shape reads), keyed by hub id:
# their memory is known before anything is fetched.
_LLAMA_8B = dict(hidden_size=4096, num_hidden_layers=32, num_attention_heads=32)
RECORDED: dict[str, dict[str, Any]] = {
    "HuggingFaceTB/SmolLM2-135M-Instruct": dict(
        vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
        num_attention_heads=9, num_key_value_heads=3, tie_word_embeddings=True,
    ),
    "HuggingFaceTB/SmolLM2-360M-Instruct": dict(
        vocab_size=49152, hidden_size=960, intermediate_size=2560, num_hidden_layers=32,
        num_attention_heads=15, num_key_value_heads=5, tie_word_embeddings=True,
    ),
    "google/gemma-3-270m": dict(
        vocab_size=262144, hidden_size=640, intermediate_size=2048, num_hidden_layers=18,
        num_attention_heads=4, num_key_value_heads=1, head_dim=256, tie_word_embeddings=True,
    ),
    "Qwen/Qwen2.5-0.5B-Instruct": dict(
        model_type="qwen2", vocab_size=151936, hidden_size=896, intermediate_size=4864,
        num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
        tie_word_embeddings=True,
    ),
    "Qwen/Qwen2.5-1.5B-Instruct": dict(
        model_type="qwen2", vocab_size=151936, hidden_size=1536, intermediate_size=8960,
        num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
        tie_word_embeddings=True,
    ),
    "meta-llama/Llama-3.2-1B-Instruct": dict(
        vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, head_dim=64, tie_word_embeddings=True,
    ),
    "meta-llama/Llama-3.1-8B-Instruct": dict(
        vocab_size=128256, intermediate_size=14336, num_key_value_heads=8, **_LLAMA_8B,
    ),
    "Qwen/Qwen2.5-32B-Instruct": dict(
        model_type="qwen2", vocab_size=152064, hidden_size=5120, intermediate_size=27648,
        num_hidden_layers=64, num_attention_heads=40, num_key_value_heads=8,
    ),
    "Qwen/Qwen3-30B-A3B": dict(
        vocab_size=151936, hidden_size=2048, num_hidden_layers=48, num_attention_heads=32,
        num_key_value_heads=4, head_dim=128, num_experts=128, moe_intermediate_size=768,
    ),
    "meta-llama/Llama-3.3-70B-Instruct": dict(
        vocab_size=128256, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
        num_attention_heads=64, num_key_value_heads=8,
    ),
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": dict(
        vocab_size=131072, hidden_size=5120, intermediate_size=32768, num_hidden_layers=40,
        num_attention_heads=32, num_key_value_heads=8, head_dim=128,
    ),
}  # fmt: skip
RECORDED["Qwen/Qwen2.5-Coder-0.5B-Instruct"] = RECORDED["Qwen/Qwen2.5-0.5B-Instruct"]
RECORDED["Qwen/Qwen2.5-Coder-1.5B-Instruct"] = RECORDED["Qwen/Qwen2.5-1.5B-Instruct"]


@dataclass(frozen=True)
class ModelShape:
    """What memory a model takes: its parameters, and per token of a sequence its KV cache
    (`layers` x `kv_heads` x `head_dim`, keys and values)."""

    params: int
    layers: int
    kv_heads: int
    head_dim: int
    dtype: str | None = None  # the dtype its weights are published in (config.json)

    def kv_bytes_per_token(self, dtype_bytes: int) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * dtype_bytes

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ModelShape:
        """The shape a transformers `config.json` declares (a multimodal one: its text model).
        RRError when a size it needs is missing or not a positive whole number."""
        config = config.get("text_config") or config

        def size(name: str, default: int | None = None) -> int:
            value = config.get(name, default)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise RRError(f"the model's config.json has no valid {name} ({value!r})")
            return value

        hidden, layers, vocab = size("hidden_size"), size("num_hidden_layers"), size("vocab_size")
        heads = size("num_attention_heads")
        kv_heads = size("num_key_value_heads", heads)
        head_dim = config.get("head_dim") or hidden // heads
        head_dim = size("head_dim", head_dim) if "head_dim" in config else head_dim
        q, kv = heads * head_dim, kv_heads * head_dim
        attention = hidden * q + 2 * hidden * kv + q * hidden
        if config.get("attention_bias") or config.get("model_type") == "qwen2":
            attention += q + 2 * kv
        experts = config.get("num_experts") or config.get("n_routed_experts") or 0
        if experts:
            mlp = experts * 3 * hidden * size("moe_intermediate_size") + hidden * experts
        else:
            mlp = 3 * hidden * size("intermediate_size")
        embeddings = vocab * hidden * (1 if config.get("tie_word_embeddings") else 2)
        params = embeddings + layers * (attention + mlp + 2 * hidden) + hidden
        dtype = config.get("torch_dtype") or config.get("dtype")
        return cls(params, layers, kv_heads, head_dim, dtype if dtype in DTYPE_BYTES else None)


def read_config(path: Path) -> dict[str, Any] | None:
    """A `config.json` as a dict, or None when it is missing or not a JSON object."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return config if isinstance(config, dict) else None


def shape_of(name: str, hub_id: str | None, folders: tuple[Path, ...] = ()) -> ModelShape | None:
    """The shape of a model known without the network: a registry model's recorded config, else
    the first `config.json` of `folders` (a local folder, a converted copy, the hub cache);
    None when none says."""
    for key in (hub_id, name):
        if key in RECORDED:
            return ModelShape.from_config(RECORDED[key])
    for folder in folders:
        config = read_config(folder / "config.json")
        if config is not None:
            try:
                return ModelShape.from_config(config)
            except RRError:
                return None
    return None
