"""Which engine runs an agent's model, and on which device and dtype."""

from __future__ import annotations

import logging
from dataclasses import replace
from functools import cache

from rrdemo.backends.llamacpp_native import available
from rrdemo.backends.registry import REGISTRY, gguf_available, resolve
from rrdemo.config import BACKEND_CHOICES, SERVED, RunConfig, check_choice
from rrdemo.errors import RRError

log = logging.getLogger(__name__)
DEFAULT_BACKEND = "auto"  # llama.cpp for GGUF models when it is installed, else transformers


@cache
def llama_cpp_missing() -> str | None:
    """Why llama-cpp-python cannot be used here (one line, logged once), or None when it can."""
    reason = available()
    if reason:
        log.warning(
            "llama.cpp backend unavailable (%s): GGUF models run on transformers; `make llama` "
            "builds llama-cpp-python",
            reason,
        )
    return reason


def choose_backend(
    model: str, requested: str = DEFAULT_BACKEND, revision: str | None = None
) -> str:
    """The engine an agent of `model` uses: llama.cpp needs a GGUF file (the offline models, a
    registry model's official GGUF copy on the hub, or a local .gguf) and llama-cpp-python; other
    hub models always use transformers. "auto" takes llama.cpp
    when it can (measured faster on CPU, bench/README.md) and falls back to transformers with one
    log line; an explicit "llamacpp" without llama-cpp-python is an error."""
    check_choice(requested, "backend", BACKEND_CHOICES)
    if requested == "transformers":
        return "transformers"
    name = (model or "").strip()
    if (
        name not in REGISTRY
        and name.lower() not in {k.lower() for k in REGISTRY}
        and not name.lower().endswith(".gguf")
    ):
        return "transformers"  # hub ids and folders (and served agents' names)
    if not gguf_available(resolve(name), revision):
        return "transformers"
    missing = llama_cpp_missing()
    if missing and requested == "llamacpp":
        raise RRError(f"the llamacpp backend needs llama-cpp-python ({missing}); run `make llama`")
    return "transformers" if missing else "llamacpp"


def with_backends(config: RunConfig, requested: str = DEFAULT_BACKEND, served=()) -> RunConfig:
    """`config` with every local agent's engine chosen (`choose_backend`); agents named in
    `served` (answered by servers) keep theirs. An agent with a dtype is a transformers agent
    under "auto" (llama.cpp runs a GGUF file as it is quantized)."""
    agents = tuple(
        a
        if a.model in served or a.backend == SERVED
        else replace(
            a,
            backend=choose_backend(
                a.model,
                "transformers" if a.dtype and requested == "auto" else requested,
                a.revision,
            ),
        )
        for a in config.agents
    )
    return config.with_(agents=agents)


def choose_device_dtype(cuda: bool, bf16: bool) -> tuple[str, str]:
    """(device, dtype) for loading: bf16 (else fp16) on a CUDA GPU, float32 on CPU.

    On CPU float32 is kept: bf16 prefills 5-7 times slower on CPUs without bf16 units.
    """
    if cuda:
        return "cuda", "bfloat16" if bf16 else "float16"
    return "cpu", "float32"


def placement(device_map: str | None = None, dtype: str | None = None) -> tuple[str, str]:
    """(device_map, dtype) a transformers model loads with: the ones given, else every layer on
    one device ("cuda" or "cpu"; "auto", spread over all of them, when several GPUs are
    visible) in bfloat16 (else float16) on a GPU, float32 on CPU (`choose_device_dtype`)."""
    import torch

    cuda = torch.cuda.is_available()
    device, default = choose_device_dtype(cuda, cuda and torch.cuda.is_bf16_supported())
    if device_map is None:
        device_map = "auto" if torch.cuda.device_count() > 1 else device
    return device_map, dtype or default
