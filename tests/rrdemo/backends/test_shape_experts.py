"""Mixture-of-experts configs are sized by every parameter they declare: routed experts under
each field name transformers uses, shared experts, dense layers, latent attention, the
vocabulary tied or not. Counted against the models transformers itself builds from the same
configs (on the meta device: no memory), and a hub repo that declares experts its weight files
do not hold is refused before any weight is fetched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rrdemo.backends.hub_limits import HUB_MAX_GB_ENV, Download, HubLimits
from rrdemo.backends.pool import ModelPool
from rrdemo.backends.shape import ModelShape
from rrdemo.errors import RRError
from tests.support.localhub import LocalHub, point_client_at, serve

BASE = dict(
    vocab_size=1000, hidden_size=64, intermediate_size=96, num_hidden_layers=4,
    num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=False,
)  # fmt: skip
ARCHITECTURES = {
    "mixtral": dict(num_local_experts=12, num_experts_per_tok=2),
    "phimoe": dict(num_local_experts=4, num_experts_per_tok=2),
    "granitemoe": dict(num_local_experts=4, num_experts_per_tok=2),
    "qwen2_moe": dict(
        num_experts=8, moe_intermediate_size=32, shared_expert_intermediate_size=80,
        num_experts_per_tok=2, decoder_sparse_step=2, mlp_only_layers=[3],
    ),
    "qwen3_moe": dict(num_experts=8, moe_intermediate_size=32, num_experts_per_tok=2, head_dim=16),
    "olmoe": dict(num_experts=8, num_experts_per_tok=2),
    "deepseek_v3": dict(
        n_routed_experts=8, n_shared_experts=2, moe_intermediate_size=32,
        first_k_dense_replace=1, q_lora_rank=48, kv_lora_rank=32, qk_rope_head_dim=8,
        qk_nope_head_dim=16, v_head_dim=16, num_experts_per_tok=2, n_group=1, topk_group=1,
    ),
    "llama": dict(tie_word_embeddings=True),
    "qwen2": dict(),
}  # fmt: skip


@pytest.mark.parametrize("model_type", ARCHITECTURES)
def test_a_config_counts_the_parameters_transformers_builds(model_type: str) -> None:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(model_type, **{**BASE, **ARCHITECTURES[model_type]})
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    built = sum(p.numel() for p in model.parameters())
    counted = ModelShape.from_config(json.loads(config.to_json_string())).params
    # exact but for the per-head query/key norms some architectures add (0.1% here)
    assert built * 0.998 <= counted <= built, (model_type, counted, built)


def test_the_probes_128_experts_are_counted() -> None:
    """The probe's shape: 128 experts x 16 layers, counted as dense before (about 50 GB missed)."""
    mixtral = dict(
        vocab_size=32000, hidden_size=1024, intermediate_size=2048, num_hidden_layers=16,
        num_attention_heads=16, num_key_value_heads=4, num_local_experts=128,
    )  # fmt: skip
    shape = ModelShape.from_config(mixtral)
    experts = 16 * (128 * 3 * 1024 * 2048 + 1024 * 128)
    assert shape.params > experts > 12.8e9
    dense = ModelShape.from_config({**mixtral, "num_local_experts": None})
    assert (shape.params - dense.params) * 4 > 48e9  # float32: what was missed


PROBE = "probe/mixtral-embeddings-only"
# A Mixtral config of 12 experts whose repo holds only its embeddings: 0.69 B parameters declared
# (0.14 B when its experts were counted as one dense MLP: its 131 MB of embeddings passed)
PROBE_CONFIG = dict(
    model_type="mixtral", vocab_size=32000, hidden_size=1024, intermediate_size=2048,
    num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=4, num_local_experts=12,
    torch_dtype="bfloat16",
)  # fmt: skip


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    with serve(LocalHub()) as hub:
        hub.add_file("model", PROBE, "config.json", json.dumps(PROBE_CONFIG).encode())
        point_client_at(hub, monkeypatch, tmp_path / "cache")
        monkeypatch.delenv(HUB_MAX_GB_ENV, raising=False)
        yield hub


def test_a_mixture_of_experts_repo_holding_only_its_embeddings_is_refused(hub) -> None:
    embeddings = 2 * 32000 * 1024 * 2  # input and output embeddings in bfloat16: 131 MB
    hub.declare("model", PROBE, {"model.safetensors": embeddings})
    pool = ModelPool(lambda *a, **o: pytest.fail("must not load"), public=True)
    with pytest.raises(
        RRError, match=r"declares about 0\.69 billion parameters .* hold 131,072,000 bytes"
    ):
        pool.shape(PROBE)
    assert [p.rsplit("/", 1)[1] for p in hub.served()] == ["config.json"]  # no weight fetched
    # with weights that do hold them, its size counts every expert: 1.4 GB in bfloat16
    hub.declare("model", PROBE, {"model.safetensors": 700_000_000})  # 4-bit-like
    checked = HubLimits(int(4e9)).check(Download(PROBE, None, ("config.json", "*.safetensors")))
    assert checked.size == ModelShape.from_config(PROBE_CONFIG).params * 2 > 1.3e9
