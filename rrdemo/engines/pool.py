"""A pool that loads each distinct model once per process and hands it to every agent using it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator

from rrdemo.backends.base import Backend
from rrdemo.config import AgentSpec
from rrdemo.engines.choice import BACKEND_CHOICES
from rrdemo.engines.loading import load_backend
from rrdemo.engines.registry import resolve
from rrdemo.errors import RRError


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
