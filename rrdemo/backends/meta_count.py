"""A hub model's parameter count, read from the model transformers builds from its `config.json`.

The model is built on the meta device (`accelerate.init_empty_weights`: shapes, no memory) by
`AutoModelForCausalLM.from_config`, the class the loader uses, so whatever the config's fields
make transformers build is counted as it builds it. The build runs in a worker process under
CPU, memory and wall-clock limits (`rrdemo.worker`): a hostile config (a million layers) costs
its limit, not the server. The field arithmetic of `rrdemo.backends.shape` stays as a cheap
first check and a cross-check.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from rrdemo.backends.shape import ModelShape
from rrdemo.errors import RRError
from rrdemo.worker import Refused, WorkLimits, shared_pool

# what one meta build may spend (importing torch and transformers comes before, in start_seconds)
META_LIMITS = WorkLimits(
    cpu_seconds=60, wall_seconds=120.0, memory_bytes=8 << 30, wait_seconds=120.0
)
MAX_LAYERS = 1024  # configs with more layers are refused before anything is built
MAX_EXPERTS = 1024
_PRELOAD = ("torch", "transformers", "accelerate", "rrdemo.backends.meta_count")
_log = logging.getLogger(__name__)


def known_type(config: dict[str, Any]) -> bool:
    """Whether transformers builds configs of this `model_type` itself (no remote code)."""
    from transformers import CONFIG_MAPPING

    model_type = config.get("model_type")
    return isinstance(model_type, str) and model_type in CONFIG_MAPPING


def built_shape(repo: str, config: dict[str, Any]) -> ModelShape:
    """`ModelShape.from_config(config)` with the parameters transformers builds from `config`.
    A config whose model type transformers does not know keeps the arithmetic count (the load
    fails before it allocates anything). RRError when the config is refused or its build
    breaks a limit."""
    shape = ModelShape.from_config(config)
    if not known_type(config):
        return shape
    text = config.get("text_config") or config
    for name, limit in (("num_hidden_layers", MAX_LAYERS), ("num_local_experts", MAX_EXPERTS)):
        for part in (config, text):
            value = part.get(name)
            if isinstance(value, int) and value > limit:
                raise RRError(
                    f"hub model {repo!r} declares {name} = {value:,}, over the {limit:,} this "
                    "app builds: refused"
                )
    for name in ("num_experts", "n_routed_experts", "moe_num_experts"):
        value = text.get(name)
        if isinstance(value, int) and value > MAX_EXPERTS:
            raise RRError(f"hub model {repo!r} declares {name} = {value:,}: refused")
    try:
        params = shared_pool("model-size", _PRELOAD, META_LIMITS).call(count_parameters, config)
    except Refused as exc:
        raise RRError(
            f"the size of hub model {repo!r} could not be measured ({exc}): refused"
        ) from None
    if abs(params - shape.params) > 0.05 * params:
        _log.warning(
            "hub model %s: config fields count %.3f B parameters, transformers builds %.3f B",
            repo,
            shape.params / 1e9,
            params / 1e9,
        )
    return dataclasses.replace(shape, params=params)


def count_parameters(config: dict[str, Any]) -> int:
    """Parameters of the model `AutoModelForCausalLM.from_config` builds from `config`, built
    on the meta device (run it in a worker: `built_shape`)."""
    from accelerate import init_empty_weights
    from transformers import AutoConfig, AutoModelForCausalLM

    fields = {k: v for k, v in config.items() if k not in ("auto_map", "quantization_config")}
    try:
        built = AutoConfig.for_model(**fields)
        with init_empty_weights():
            model = AutoModelForCausalLM.from_config(built)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise RRError(f"transformers cannot build this config.json ({first})") from None
    return int(model.num_parameters())
