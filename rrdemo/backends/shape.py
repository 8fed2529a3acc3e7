"""A model's size as its `config.json` declares it: parameters, and the KV cache one token takes.

The memory budget (`rrdemo.memory.check_memory`) and the hub's size check
(`rrdemo.backends.hub_limits`) read a model's shape before anything is loaded: from the
published configs recorded here for the registry's models, from a local folder's `config.json`,
or from the hub's `config.json` at the checked commit. Parameters are counted from the
architecture (embeddings, tied or not; attention, latent or not; a dense MLP, or every routed
and shared expert with its router; norms), the way `model.num_parameters()` counts them: what
transformers would allocate, whatever the weight files hold (tested against the models
transformers builds for Llama, Qwen, Mixtral, Qwen MoE, OLMoE, GraniteMoE, PhiMoE, DeepSeek V3).
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
        size = _sizes(config)
        hidden, layers, vocab = size("hidden_size"), size("num_hidden_layers"), size("vocab_size")
        heads = size("num_attention_heads")
        kv_heads = size("num_key_value_heads", heads)
        head_dim = size("head_dim", hidden // heads)
        if size("kv_lora_rank", 0):  # multi-head latent attention (DeepSeek V2/V3)
            attention, head_dim = _latent_attention(size, hidden, heads)
            kv_heads = heads  # transformers caches every head's keys and values
        else:
            q, kv = heads * head_dim, kv_heads * head_dim
            attention = hidden * q + 2 * hidden * kv + q * hidden
            if config.get("attention_bias") or config.get("model_type") in ("qwen2", "qwen2_moe"):
                attention += q + 2 * kv
        mlp = layers * 3 * hidden * size("intermediate_size", 0)  # dense layers
        experts = max(size(name, 0) for name in EXPERT_FIELDS)
        if experts:
            mlp = _experts(config, size, hidden, layers, experts)
        embeddings = vocab * hidden * (1 if config.get("tie_word_embeddings") else 2)
        params = embeddings + layers * (attention + 2 * hidden) + mlp + hidden
        dtype = config.get("torch_dtype") or config.get("dtype")
        return cls(params, layers, kv_heads, head_dim, dtype if dtype in DTYPE_BYTES else None)


# The fields that declare how many routed experts a mixture-of-experts layer holds (Mixtral,
# PhiMoE, GraniteMoE: num_local_experts; Qwen MoE, OLMoE: num_experts; DeepSeek: n_routed_experts).
EXPERT_FIELDS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")


def _sizes(config: dict[str, Any]):
    """`size(name, default)`: the config's whole number `name` (a missing or null one: `default`,
    and no default means it is required); RRError when it is not a positive whole number."""

    def size(name: str, default: int | None = None) -> int:
        value = config.get(name)
        if value is None:
            value = default
        if value == 0 and default == 0:
            return 0
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise RRError(f"the model's config.json has no valid {name} ({value!r})")
        return value

    return size


def _latent_attention(size, hidden: int, heads: int) -> tuple[int, int]:
    """Parameters of one multi-head latent attention layer, and the head size its cache keeps."""
    rope, nope, value = size("qk_rope_head_dim"), size("qk_nope_head_dim"), size("v_head_dim")
    latent, q_rank = size("kv_lora_rank"), size("q_lora_rank", 0)
    query = heads * (rope + nope)
    q = hidden * q_rank + q_rank + q_rank * query if q_rank else hidden * query
    kv = hidden * (latent + rope) + latent + latent * heads * (nope + value)
    return q + kv + heads * value * hidden, max(rope + nope, value)


def _experts(config: dict[str, Any], size, hidden: int, layers: int, experts: int) -> int:
    """Parameters of every layer's feed-forward part in a mixture-of-experts model: each sparse
    layer holds all its routed experts (of `moe_intermediate_size`, else `intermediate_size`),
    its router and its shared experts (DeepSeek's `n_shared_experts`, Qwen MoE's
    `shared_expert_intermediate_size` and gate); the layers declared dense (DeepSeek's first
    `first_k_dense_replace`, Qwen MoE's `mlp_only_layers` and `decoder_sparse_step`) hold one MLP
    of `intermediate_size`."""
    dense = 3 * hidden * size("intermediate_size", 0)
    width = size("moe_intermediate_size", 0) or size("intermediate_size")
    sparse = experts * 3 * hidden * width + hidden * experts
    sparse += size("n_shared_experts", 0) * 3 * hidden * width
    shared = size("shared_expert_intermediate_size", 0)
    if shared:
        sparse += 3 * hidden * shared + hidden
    step, first = size("decoder_sparse_step", 1), min(size("first_k_dense_replace", 0), layers)
    listed = config.get("mlp_only_layers")
    only = {i for i in listed if isinstance(i, int)} if isinstance(listed, list) else set()
    # layers i in [first, layers) with (i + 1) a multiple of step, less those listed dense
    sparse_layers = layers // step - first // step
    sparse_layers -= sum(1 for i in only if first <= i < layers and (i + 1) % step == 0)
    return sparse_layers * sparse + (layers - sparse_layers) * dense


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
