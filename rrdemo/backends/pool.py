"""A pool that loads each distinct model once per process and hands it to every agent using it.

The pool keeps at most `max_models` loaded models (the least recently used is unloaded first), so
a public app's memory stays bounded however many models its visitors name. A public pool (the web
app's) admits only the names `rrdemo.backends.registry.public_model` allows, and what it fetches
from the hub passes `rrdemo.backends.hub_limits` (a size cap read before any download).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from rrdemo.backends.base import Backend
from rrdemo.backends.choice import BACKEND_CHOICES
from rrdemo.backends.hub_limits import HubLimits
from rrdemo.backends.loading import hub_download, load_backend
from rrdemo.backends.registry import REGISTRY, public_model, resolve
from rrdemo.config import AgentSpec, check_choice
from rrdemo.errors import RRError

MAX_MODELS_ENV = "RRDEMO_MAX_MODELS"
GIB_PER_MODEL = 6  # memory one loaded model may take, with its caches, on a CPU Space


def default_max_models() -> int:
    """`RRDEMO_MAX_MODELS` when set, else one model per 6 GiB of the machine's memory (1 to 4):
    a 16 GiB Space keeps two (read when called)."""
    configured = os.environ.get(MAX_MODELS_ENV, "").strip()
    if configured:
        if not configured.isdigit() or int(configured) < 1:
            raise RRError(
                f"{MAX_MODELS_ENV} must be a whole number of at least 1, got {configured!r}"
            )
        return int(configured)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not a POSIX system: be frugal
        return 1
    return max(1, min(4, total // (GIB_PER_MODEL * 2**30)))


class ModelPool:
    """Loads each distinct (model, revision, engine, dtype) once and hands the same backend to every agent
    using it. `preferred_backend` is the engine new runs ask for ("auto" picks llama.cpp for GGUF
    models when installed); `get` loads what each agent's spec names. `public` pools (the web
    app's) admit registry names and hub ids only; `max_models` bounds what stays loaded
    (default `default_max_models()`); served backends (`put`) do not count against it. `hub`
    bounds what is fetched from the hub (`HubLimits.from_env(public)` by default: always for a
    public pool, for others only when the operator sets a cap); a download holds no lock that
    runs of loaded models need, and only one model loads into memory at a time."""

    def __init__(
        self,
        loader: Callable[..., Backend] = load_backend,
        *,
        preferred_backend: str = "transformers",
        public: bool = False,
        max_models: int | None = None,
        hub: HubLimits | None | Literal["env"] = "env",
        device_map: str | None = None,
    ) -> None:
        check_choice(preferred_backend, "backend", BACKEND_CHOICES)
        self._loader = loader
        self._options: dict[str, Any] = {"public": True} if public else {}
        if device_map is not None:  # where transformers puts every model this pool loads
            self._options["device_map"] = device_map
        self.preferred_backend = preferred_backend
        self.public = public
        self.max_models = max_models if max_models is not None else default_max_models()
        self.hub = HubLimits.from_env(public) if hub == "env" else hub
        self._backends: OrderedDict[tuple, Backend] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()  # guards `_backends`; held for bookkeeping only
        self._slot = threading.Lock()  # one load into memory at a time (downloads come before)

    def _resolve(self, name: str):
        return public_model(name) if self.public else resolve(name)

    def admit(self, name: str) -> None:
        """Refuse (RRError) a name this pool would not load, before anything else reads it:
        a public pool takes served names, registry names and hub ids only, and a model that is
        not loaded yet must pass the hub limits (size cap, licence, the hour's budget)."""
        if (name, None, None) in self._backends:
            return
        info = self._resolve(name)
        if self.hub is not None and info.name not in self.loaded():
            self.hub.admit(info)

    def get(
        self,
        name: str,
        revision: str | None = None,
        backend: str = "transformers",
        dtype: str | None = None,
    ) -> Backend:
        served = self._put(name, revision)
        if served is not None:
            return served
        info = self._resolve(name)
        key = (info.name, revision, backend, dtype)
        with self._lock:
            if key in self._backends:
                self._backends.move_to_end(key)
                return self._backends[key]
        download = hub_download(info, revision, backend) if self.hub is not None else None
        if download is not None:  # checked and downloaded holding no lock: other runs go on
            self.hub.fetch(download)
        with self._slot:  # two users asking for one model load it once
            with self._lock:
                if key in self._backends:
                    self._backends.move_to_end(key)
                    return self._backends[key]
                self._make_room()
            loaded = self._load(key)
            with self._lock:
                self._backends[key] = loaded
            return loaded

    def _load(self, key: tuple) -> Backend:
        name, revision, backend, dtype = key
        options = {**self._options, **({"dtype": dtype} if dtype else {})}
        if backend == "transformers":  # the loader's default engine (custom loaders)
            return self._loader(name, revision, **options)
        return self._loader(name, revision, backend=backend, **options)

    def _make_room(self) -> None:
        """Unload least recently used models until one more fits under `max_models`. A run still
        holding an unloaded backend keeps it until it ends; then its memory is freed."""
        loaded = [key for key in self._backends if key[2] is not None]
        for key in loaded[: max(0, len(loaded) - self.max_models + 1)]:
            del self._backends[key]

    def ensure(self, specs: Iterable[AgentSpec]) -> Iterator[str]:
        """Load every distinct (model, revision, engine) the agents `specs` name, yielding each
        model's name just before a load (none for what is loaded already). An unknown name fails
        with the list of known models."""
        for spec in {(s.model, s.revision, s.backend, s.dtype): s for s in specs}.values():
            if not self._has(spec.model, spec.revision, spec.backend, spec.dtype):
                yield self._resolve(spec.model).name
            self.get(spec.model, spec.revision, spec.backend, spec.dtype)

    def _put(self, name: str, revision: str | None) -> Backend | None:
        """A `put` backend of `name`: it answers any engine and dtype, and a revision-less one
        any revision (a served model's revision names its weights, not a load)."""
        return self._backends.get((name, revision, None)) or self._backends.get((name, None, None))

    def _has(self, name: str, revision: str | None, backend: str, dtype: str | None) -> bool:
        if self._put(name, revision) is not None:
            return True
        return (self._resolve(name).name, revision, backend, dtype) in self._backends

    def loaded(self) -> list[str]:
        return [key[0] for key in self._backends]

    def release(self) -> None:
        """Unload every loaded model (served backends stay): the next `get` loads again. Whoever
        still holds a backend keeps it until done; then its memory is freed."""
        with self._lock:
            for key in [key for key in self._backends if key[2] is not None]:
                del self._backends[key]

    def sources(self) -> dict[str, str]:
        """Each loaded model and where it came from ("shipped file" | "hub" | "local folder" | ...)."""
        return {
            name: backend.loaded_from or "served / built in"
            for (name, *_), backend in list(self._backends.items())
        }

    def offered(self) -> list[str]:
        """The registry models to offer in a model list: all of them, or with hub limits the
        shipped ones and those whose recorded size fits the cap (`HubLimits.offers`)."""
        return [n for n, info in REGISTRY.items() if self.hub is None or self.hub.offers(info)]

    def put(self, backend: Backend) -> None:
        """Register an already built backend (tests, served models) for every engine."""
        with self._lock:
            self._backends[(backend.name, backend.revision, None)] = backend
