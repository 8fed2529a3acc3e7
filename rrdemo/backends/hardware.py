"""What the app runs on (CPU, a CUDA GPU, a ZeroGPU Space) and how generation asks for a GPU.

On a ZeroGPU Space (`SPACES_ZERO_GPU=true`, `spaces` importable) a GPU is attached only inside
functions decorated with `spaces.GPU`; `on_gpu()` wraps the arena's generation that way, with a
duration computed from N, M, L and K (the decorator's callable form, called with the same
arguments as the function). Elsewhere it returns the function unchanged and never imports
`spaces`. Nothing here runs at import time.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
from collections.abc import Callable
from typing import Any, TypeVar

from rrdemo.backends.choice import choose_device_dtype, llama_cpp_missing

F = TypeVar("F", bound=Callable[..., Any])

# ZeroGPU duration estimate (seconds). GPU speeds are not measured here: these are deliberately
# generous guesses for a <= 1.5B model on an H200 slice; the quota only charges what is used.
GPU_START_S = 15.0  # attaching the GPU, moving a small model, first CUDA kernels
GPU_STEP_S = 0.05  # one batched decode step (all MAJ answers or all RR trajectories at once)
GPU_TURN_S = 0.1  # one RR turn: the next agent prefills the text written since its last turn
GPU_MIN_S, GPU_MAX_S = 30, 300


def cpu_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), or what the platform calls it."""
    import platform
    from pathlib import Path

    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def on_zero_gpu() -> bool:
    """True on a ZeroGPU Space: `SPACES_ZERO_GPU` is set and the `spaces` package is importable."""
    return _truthy(os.environ.get("SPACES_ZERO_GPU")) and (
        importlib.util.find_spec("spaces") is not None
    )


def on_space() -> bool:
    """True when running as a Hugging Face Space (the platform sets `SPACE_ID`)."""
    return bool(os.environ.get("SPACE_ID", "").strip())


def gpu_duration(n: int, m: int, max_tokens: int, k: int) -> int:
    """Seconds to ask ZeroGPU for one arena run: MAJ (N answers) then RRMaj (M trajectories).

    Both methods decode L tokens in batched steps; RR adds ceil(L/K) turns per trajectory,
    each a prefill by the next agent. `m` = 0 means M = N, as in the arena.
    """
    n, k, max_tokens = max(1, int(n)), max(1, int(k)), max(1, int(max_tokens))
    m = int(m) if int(m) > 0 else n
    turns = math.ceil(max_tokens / k) * m
    estimate = GPU_START_S + 2 * max_tokens * GPU_STEP_S + turns * GPU_TURN_S
    return int(min(GPU_MAX_S, max(GPU_MIN_S, math.ceil(estimate))))


def on_gpu(function: F, duration: Callable[..., int]) -> F:
    """`spaces.GPU(duration=duration)(function)` on ZeroGPU; `function` itself anywhere else."""
    if not on_zero_gpu():
        return function
    import spaces  # only present (and only needed) on ZeroGPU Spaces

    return spaces.GPU(duration=duration)(function)


def prepare() -> None:
    """Import `spaces` before torch initialises CUDA, as ZeroGPU requires (a no-op elsewhere)."""
    if on_zero_gpu():
        import spaces  # noqa: F401


def describe_hardware() -> str:
    """One line for the About tab: where generation runs, on which engine and in which precision."""
    if on_zero_gpu():
        return "ZeroGPU (a GPU attached per run via `spaces.GPU`; models in bfloat16)"
    import torch

    if torch.cuda.is_available():
        _, dtype = choose_device_dtype(True, torch.cuda.is_bf16_supported())
        return f"CUDA GPU: {torch.cuda.get_device_name(0)} (models in {dtype})"
    offline = (
        "offline models as 4-bit GGUF files on llama.cpp"
        if llama_cpp_missing() is None
        else "offline models dequantized to float32 on transformers (llama.cpp is not installed)"
    )
    return (
        f"CPU: {os.cpu_count()} cores · {offline}; hub models on transformers in float32 "
        f"({torch.get_num_threads()} torch threads)"
    )
