"""Which model an agent's results belong to, so that rows of the same weights group together.

A local agent's `model` names its weights (a registry name, a hub id, a folder); a served
agent's `model` is only what the ensemble or sweep file called it (`llama70b`, `smollm2@llama`),
and its `hub_id` (with `revision`) names the weights its server runs. A result names a model by
its registry name when the registry has it (`smollm2` for HuggingFaceTB/SmolLM2-135M-Instruct;
the paper's models are registered under their hub ids), else by its hub id, so a served row, a
local row and a paper row of the same weights carry the same name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rrdemo.backends.registry import REGISTRY
from rrdemo.config import SERVED
from rrdemo.errors import RRError


class UnnamedWeights(RRError):
    """A served agent whose file did not say which weights its server runs."""


def canonical_model(name: str) -> str:
    """The registry name of a registry model given by name or hub id; otherwise `name`."""
    if name in REGISTRY:
        return name
    return next((info.name for info in REGISTRY.values() if info.hub_id == name), name)


def result_model(agent: Mapping[str, Any]) -> str:
    """The model a logged agent (`AgentSpec` as a dict) counts as in results.

    Raises `UnnamedWeights` for a served agent without `hub_id`: its name alone says nothing
    about its weights."""
    if agent.get("hub_id"):
        return canonical_model(agent["hub_id"])
    name = agent["model"]
    if agent.get("backend") == SERVED:
        raise UnnamedWeights(
            f"served agent {name!r} does not say which weights its server runs, so its rows "
            "cannot be named or grouped: add `hub_id:` (their hub id, e.g. "
            "meta-llama/Llama-3.3-70B-Instruct) and, if you know it, `revision:` to its endpoint "
            "or agent in the ensemble or sweep file, and run it again"
        )
    return canonical_model(name)


def served_weights(configs: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Served agents' names -> the hub id of their weights, from logged configs."""
    return {
        agent["model"]: agent["hub_id"]
        for config in configs
        for agent in config["agents"]
        if agent.get("hub_id")
    }
