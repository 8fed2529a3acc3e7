"""A hub model's size is read from the model transformers builds from its config (on the meta
device, in a bounded worker), so config fields transformers ignores cannot shrink the count:
the four bypasses of the third probe, and Mixtral-8x7B with `moe_intermediate_size: 1`, against
a loopback hub that records every file it serves."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rrdemo.backends.hub_limits import HUB_MAX_GB_ENV, Download, HubLimits
from rrdemo.backends.meta_count import built_shape
from rrdemo.backends.shape import ModelShape
from rrdemo.errors import RRError
from tests.support.localhub import LocalHub, point_client_at, serve

# A small Mixtral: 8 experts of intermediate_size 2048 in each of 8 layers
MIXTRAL = dict(
    model_type="mixtral", vocab_size=32000, hidden_size=1024, intermediate_size=2048,
    num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=4, num_local_experts=8,
    num_experts_per_tok=2, torch_dtype="bfloat16",
)  # fmt: skip
# Fields other architectures read and Mixtral ignores: each made the field arithmetic count
# fewer experts than transformers builds.
BYPASSES = {
    "moe_intermediate_size": {"moe_intermediate_size": 1},
    "first_k_dense_replace": {"first_k_dense_replace": 4},
    "decoder_sparse_step": {"decoder_sparse_step": 8},
    "mlp_only_layers": {"mlp_only_layers": [0, 1, 2, 3, 4, 5, 6]},
}
MIXTRAL_8X7B = dict(
    model_type="mixtral", vocab_size=32000, hidden_size=4096, intermediate_size=14336,
    num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8, num_local_experts=8,
    num_experts_per_tok=2, torch_dtype="bfloat16",
)  # fmt: skip


@pytest.mark.parametrize("bypass", BYPASSES)
def test_fields_mixtral_ignores_do_not_shrink_its_count(bypass: str) -> None:
    config = {**MIXTRAL, **BYPASSES[bypass]}
    undercounted = ModelShape.from_config(config).params
    right = ModelShape.from_config(MIXTRAL).params  # the arithmetic transformers agrees with
    assert undercounted < 0.8 * right  # the bypass: the field arithmetic alone is fooled
    assert built_shape("probe/mixtral", config).params == right


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    with serve(LocalHub()) as hub:
        point_client_at(hub, monkeypatch, tmp_path / "cache")
        monkeypatch.delenv(HUB_MAX_GB_ENV, raising=False)
        yield hub


def test_mixtral_8x7b_with_one_wide_experts_counts_above_40_billion(hub) -> None:
    """Counted 1.61 B before (under the 4 GB cap), it is refused from its config alone."""
    repo = "probe/mixtral-8x7b-one-wide"
    config = {**MIXTRAL_8X7B, "moe_intermediate_size": 1}
    assert ModelShape.from_config(config).params < 2e9  # what the field arithmetic says
    hub.add_file("model", repo, "config.json", json.dumps(config).encode())
    hub.declare("model", repo, {"model.safetensors": 1_600_000_000})  # what the trick counted
    with pytest.raises(RRError, match=r"declares about 46\.7\d billion parameters"):
        HubLimits(int(4e9)).check(Download(repo, None, ("config.json", "*.safetensors")))
    assert [p.rsplit("/", 1)[1] for p in hub.served()] == ["config.json"]


def test_a_config_with_a_million_layers_is_refused_before_it_is_built() -> None:
    with pytest.raises(RRError, match=r"num_hidden_layers = 1,000,000, over the 1,024"):
        built_shape("probe/deep", {**MIXTRAL, "num_hidden_layers": 1_000_000})
