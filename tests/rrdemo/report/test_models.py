"""Which model an agent's results belong to: registry names, hub ids, served weights."""

from __future__ import annotations

import pytest

from rrdemo.report.models import UnnamedWeights, canonical_model, result_model, served_weights

SMOL = "HuggingFaceTB/SmolLM2-135M-Instruct"
LLAMA = "meta-llama/Llama-3.3-70B-Instruct"


def test_a_registry_model_is_named_by_its_registry_name_anything_else_by_itself() -> None:
    assert canonical_model(SMOL) == canonical_model("smollm2") == "smollm2"
    assert canonical_model(LLAMA) == LLAMA  # the paper's models are registered by hub id
    assert canonical_model("org/unknown") == "org/unknown"


def test_served_agents_are_named_by_their_weights() -> None:
    served = {"model": "smollm2@llama", "backend": "openai", "hub_id": SMOL, "revision": None}
    assert result_model(served) == "smollm2"
    assert result_model({"model": "llama70b", "backend": "openai", "hub_id": LLAMA}) == LLAMA
    assert result_model({"model": "smollm2", "backend": "llamacpp"}) == "smollm2"
    assert served_weights([{"agents": [served, {"model": "smollm2"}]}]) == {"smollm2@llama": SMOL}


def test_a_served_agent_without_hub_id_says_what_to_add() -> None:
    with pytest.raises(UnnamedWeights, match="add `hub_id:`.*`revision:`"):
        result_model({"model": "smollm2@llama", "backend": "openai"})
