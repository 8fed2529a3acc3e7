"""Load one model on one engine: its shipped GGUF (or the converted copy), a hub id, a folder.

transformers and torch load inside the functions, so importing this module stays cheap.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from rrdemo.backends.base import Backend
from rrdemo.backends.choice import placement
from rrdemo.backends.hub_limits import Download, hub_offline
from rrdemo.backends.llamacpp import LlamaCppBackend
from rrdemo.backends.registry import (
    PACKAGES,
    REGISTRY,
    ModelInfo,
    gguf_path,
    locate_shipped,
    public_model,
    resolve,
    shipped_gguf,
)
from rrdemo.backends.shape import ModelShape, read_config
from rrdemo.config import BACKENDS, check_choice
from rrdemo.errors import RRError
from rrdemo.paths import cache_dir

log = logging.getLogger(__name__)

# Where a backend's weights came from, as the log and the About tab say it.
SHIPPED, HUB, LOCAL = "shipped file", "hub", "local folder"


def _placed(model, device_map: str, dtype: str):
    """A model loaded on CPU in float32 (a GGUF file) moved to `device_map` in `dtype`; "auto"
    (several devices) dispatches it with accelerate."""
    import torch

    model = model.to(dtype=getattr(torch, dtype))
    if device_map in ("auto", "balanced", "sequential"):
        from accelerate import dispatch_model, infer_auto_device_map

        return dispatch_model(model, infer_auto_device_map(model))
    return model.to(device_map)


def _load_shipped(info: ModelInfo, gguf: Path | None, device_map: str, dtype: str):
    """Load a shipped GGUF once, save the dequantized copy, and load that copy on later starts.

    Returns None when neither the converted copy nor the shipped file exists.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if info.gguf:  # a user's own file: load it as it is (no converted copy)
        own = Path(info.gguf)
        tokenizer = AutoTokenizer.from_pretrained(own.parent, gguf_file=own.name)
        model = AutoModelForCausalLM.from_pretrained(
            own.parent, gguf_file=own.name, dtype="float32"
        )
        return _placed(model, device_map, dtype), tokenizer
    converted = cache_dir() / "models" / info.name
    if (converted / "config.json").exists():
        tokenizer = AutoTokenizer.from_pretrained(converted)
        model = AutoModelForCausalLM.from_pretrained(converted, dtype=dtype, device_map=device_map)
        return model, tokenizer
    if gguf is None:
        return None
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype="float32")
    # A GGUF-loaded model refuses save_pretrained until its quantization marker is dropped:
    # the weights are already plain float32 tensors.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    tmp = converted.with_name(converted.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if not converted.exists():  # another process may have finished first; both copies are equal
        tmp.replace(converted)
    return _placed(model, device_map, dtype), tokenizer


# What a hub-only load fetches: configs, tokenizers, chat templates and safetensors weights.
HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.txt", "*.tiktoken", "*.jinja"]


def _hub_snapshot(info: ModelInfo, revision: str | None) -> str:
    """The hub's copy of `info.hub_id` (downloaded, or from the HF cache), never a local folder."""
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(info.hub_id, revision=revision, allow_patterns=HUB_FILES)
    except Exception as exc:  # not on the hub, gated, offline and not cached, bad revision
        log.info("the hub gave no %r: %s", info.hub_id, exc)  # its text names settings: log only
        raise RRError(hub_failure(info.name, exc)) from None


# Why the hub gave no model, by the hub library's exception (its own text names environment
# settings and cache paths, so a visitor reads one of these instead).
_HUB_FAILURES = {
    "RepositoryNotFoundError": "is not a model on the Hugging Face hub (or it is private)",
    "GatedRepoError": "is gated on the Hugging Face hub (its licence must be accepted)",
    "RevisionNotFoundError": "has no such revision on the Hugging Face hub",
}
UNREACHABLE = "is not on this machine, and the Hugging Face hub cannot be reached from here"


def hub_failure(name: str, exc: BaseException) -> str:
    """One sentence on why the hub gave no model `name`, with the models this machine has."""
    why = _HUB_FAILURES.get(type(exc).__name__)
    if why is None and (hub_offline() or _unreachable(exc)):
        why = UNREACHABLE
    why = why or "could not be fetched from the Hugging Face hub"
    here = ", ".join(n for n, i in REGISTRY.items() if i.offline)
    return f"The model {name!r} {why}; the models this machine has are {here}."


def _unreachable(exc: BaseException) -> bool:
    """The hub could not be asked (no network, offline mode, nothing cached)."""
    names = {type(e).__name__ for e in (exc, exc.__cause__, exc.__context__) if e is not None}
    return bool(names & {"LocalEntryNotFoundError", "OfflineModeIsEnabled", "ConnectError"}) or (
        isinstance(exc, (ConnectionError, TimeoutError))
    )


def _load_pretrained(
    info: ModelInfo,
    revision: str | None,
    source: str,
    device_map: str,
    dtype: str,
    commit: str | None = None,
):
    """`from_pretrained` of a hub id (downloaded or from the HF cache; at `commit` when the hub
    limits checked one) or a local folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    revision = commit or revision
    where = _hub_snapshot(info, revision) if info.hub_only else info.hub_id
    try:
        tokenizer = AutoTokenizer.from_pretrained(where, revision=revision)
        model = AutoModelForCausalLM.from_pretrained(
            where, revision=revision, dtype=dtype, device_map=device_map
        )
    except OSError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        shipped = ", ".join(n for n, i in REGISTRY.items() if i.offline)
        if source == HUB and hub_offline():
            hint = (
                "HF_HUB_OFFLINE=1 forbids downloading it and it is not in the local hub cache "
                "(HF_HOME); unset HF_HUB_OFFLINE on a machine with a network"
            )
            if info.offline:
                hint += f", or install its shipped file ({PACKAGES.get(info.name, 'make setup')})"
            raise RRError(f"could not load model {info.name!r}: {hint}. ({first})") from None
        raise RRError(
            f"could not load model {info.hub_id!r}"
            + (f" at revision {revision!r}" if revision else "")
            + f": {first}. Models with a shipped file: {shipped}"
        ) from None
    return model, tokenizer


def _hub_gguf(info: ModelInfo, commit: str | None = None) -> Path | None:
    """The official GGUF copy of a registry model, downloaded from the hub (or its cache), at
    `commit` when the hub limits checked one."""
    if info.hub_gguf is None:
        return None
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    repo, file = info.hub_gguf
    try:
        return Path(hf_hub_download(repo, file, revision=commit))
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        hint = (
            "HF_HUB_OFFLINE=1 forbids downloading it; " if hub_offline() else ""
        ) + f"install its shipped file ({PACKAGES.get(info.name, 'make setup')})"
        raise RRError(
            f"could not load {repo}/{file} for {info.name!r}: {hint}. ({first})"
        ) from None


def _load_llamacpp(info: ModelInfo, revision: str | None, commit: str | None = None) -> Backend:
    path = gguf_path(info, revision)
    source = LOCAL if info.gguf else SHIPPED
    if path is None and revision is None:
        path, source = _hub_gguf(info, commit), HUB
    if path is None:
        raise RRError(
            f"the llamacpp backend runs GGUF files (the installed offline models or a local .gguf); "
            f"{info.name!r} has none here: use the transformers backend"
        )
    backend = LlamaCppBackend(
        info.name,
        path,
        chat=None if info.gguf else info.chat,
        eos_token_ids=info.eos_token_ids,
    )
    backend.loaded_from = source
    return backend


def hub_download(info: ModelInfo, revision: str | None, backend: str) -> Download | None:
    """What `load_backend` would fetch from the hub for `info` on `backend`, or None when it
    loads from files here (a shipped or converted copy, a local file or folder). Read before
    loading, so that a size cap refuses a model before any byte of it is downloaded."""
    if backend == "llamacpp":
        if info.hub_gguf is None or revision is not None or gguf_path(info, revision) is not None:
            return None
        repo, file = info.hub_gguf
        return Download(repo, None, (file,), weights=(file,))
    if info.gguf or info.hub_id is None:
        return None
    if info.offline and revision is None and os.environ.get("RRDEMO_OFFLINE_FROM_HUB") != "1":
        converted = cache_dir() / "models" / info.name / "config.json"
        if converted.exists() or shipped_gguf(info) is not None:
            return None
    if not info.hub_only and Path(info.hub_id).is_dir():
        return None
    return Download(info.hub_id, revision, tuple(HUB_FILES))


def hub_shape(repo: str, revision: str | None) -> ModelShape | None:
    """What the `config.json` of hub model `repo` declares (from the HF cache, else downloaded:
    a few kB), or None when it cannot be read (offline and not cached, not a model)."""
    from huggingface_hub import hf_hub_download

    try:
        config = read_config(Path(hf_hub_download(repo, "config.json", revision=revision)))
        return ModelShape.from_config(config) if config is not None else None
    except Exception:  # offline, not found, not a transformers model: the load says why
        return None


def load_backend(
    name: str,
    revision: str | None = None,
    backend: str = "transformers",
    *,
    public: bool = False,
    device_map: str | None = None,
    dtype: str | None = None,
    commit: str | None = None,
) -> Backend:
    """Load one model with the engine `backend` (use a `ModelPool` to share it).

    A registry entry with a shipped file loads from it (or its converted copy) when installed,
    else from the hub by its `hub_id`; a folder loads as a local folder. `backend.loaded_from`
    says which ("shipped file" | "hub" | "local folder"). The llamacpp engine runs GGUF files only.
    `public` (names typed in the web app) allows only what `public_model` allows. transformers
    models load with `placement(device_map, dtype)`: a dtype changes the text, so it comes from
    the agent's config (`AgentSpec.dtype`); where the layers sit does not, so the device map is a
    loading option (`ModelPool(device_map=...)`, `--device-map`). `commit`: the hub commit
    the hub limits checked and downloaded (`HubLimits.fetch`); a hub load reads that one.
    """
    info = public_model(name) if public else resolve(name)
    if backend == "llamacpp":
        if dtype is not None:
            raise RRError(f"dtype {dtype} is a transformers setting; llama.cpp runs {name} as is")
        return _load_llamacpp(info, revision, commit)
    check_choice(backend, "backend", BACKENDS)
    from rrdemo.backends.hf import TransformersBackend  # torch loads here, not at import

    device_map, dtype = placement(device_map, dtype)
    loaded = None
    if info.gguf:
        loaded, source = _load_shipped(info, Path(info.gguf), device_map, dtype), LOCAL
    elif info.offline and revision is None and os.environ.get("RRDEMO_OFFLINE_FROM_HUB") != "1":
        loaded = _load_shipped(info, shipped_gguf(info), device_map, dtype)
        source = SHIPPED
    if loaded is None:
        source = LOCAL if not info.hub_only and Path(info.hub_id or "").is_dir() else HUB
        loaded = _load_pretrained(info, revision, source, device_map, dtype, commit)
    model, tokenizer = loaded
    log.info(
        "model %s loaded from: %s (device map %s, %s, first layer on %s)",
        *(info.name, source, device_map, dtype, model.device),
    )
    backend = TransformersBackend(
        info.name,
        model,
        tokenizer,
        revision=revision,
        chat=info.chat if info.offline and not info.gguf else None,
        eos_token_ids=info.eos_token_ids,
    )
    backend.loaded_from = source
    return backend


def load_tokenizer(source: str):
    """A transformers tokenizer from a registry name (offline models), a local folder or a hub id.

    Offline registry models use the converted copy under the cache when it exists, else the
    tokenizer inside their GGUF file, so serving `smollm2` needs no network.
    """
    from transformers import AutoTokenizer

    info = REGISTRY.get(source)
    try:
        if info is not None and info.offline:
            converted = cache_dir() / "models" / info.name
            if (converted / "tokenizer_config.json").exists():
                return AutoTokenizer.from_pretrained(converted)
            gguf = locate_shipped(info.name)
            return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        target = info.hub_id if info is not None and info.hub_id else source
        return AutoTokenizer.from_pretrained(target)
    except (OSError, ValueError, ImportError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RRError(f"could not load the tokenizer {source!r}: {first}") from None
