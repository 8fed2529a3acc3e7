"""A pool that loads each distinct model once per process and hands it to every agent using it.

The pool keeps at most `max_models` loaded models (the least recently used is unloaded first), so
a public app's memory stays bounded however many models its visitors name. A public pool (the web
app's) admits only the names `rrdemo.backends.registry.public_model` allows, and what it fetches
from the hub passes `rrdemo.backends.hub_limits` (a size cap read before any download).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from rrdemo.backends.base import Backend
from rrdemo.backends.choice import BACKEND_CHOICES
from rrdemo.backends.hub_limits import Download, HubLimits, hub_offline
from rrdemo.backends.loading import HUB_FILES, hub_download, hub_shape, load_backend
from rrdemo.backends.registry import REGISTRY, public_model, resolve
from rrdemo.backends.shape import ModelShape, shape_of
from rrdemo.config import AgentSpec, check_choice
from rrdemo.errors import RRError
from rrdemo.memory import memory_budget
from rrdemo.memory_ledger import MemoryLedger, process_ledger
from rrdemo.paths import cache_dir

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
        ledger: MemoryLedger | None = None,
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
        # every batch of every run and every kept model, counted against one budget
        self.ledger = ledger if ledger is not None else process_ledger()

    def _resolve(self, name: str):
        return public_model(name) if self.public else resolve(name)

    def admit(self, name: str, client: str = "") -> None:
        """Refuse (RRError) a name this pool would not load, before anything else reads it:
        a public pool takes served names, registry names and hub ids only, and a model that is
        not loaded yet must pass the hub limits (size cap, licence, `client`'s hour budget)."""
        if (name, None, None) in self._backends:
            return
        info = self._resolve(name)
        if self.hub is not None and info.name not in self.loaded():
            self.hub.admit(info, client)

    def shape(self, name: str, revision: str | None = None, client: str = "") -> ModelShape | None:
        """What model `name` declares (parameters, KV cache per token) for the memory budget,
        read before it loads: a loaded model's own config, a registry model's recorded one, a
        local folder's or converted copy's `config.json`, else the hub's at the checked commit
        (through the hub limits, which refuse what they refuse, and count it against `client`'s
        hour). None for served models and when nothing says (a `.gguf` file)."""
        if self._put(name, revision) is not None:
            return None
        info = self._resolve(name)
        for (loaded, rev, *_), backend in list(self._backends.items()):
            config = getattr(getattr(backend, "model", None), "config", None)
            if loaded == info.name and rev == revision and config is not None:
                return ModelShape.from_config(config.to_dict())
        folders = [cache_dir() / "models" / info.name]
        if info.hub_id and not info.hub_only and Path(info.hub_id).is_dir():
            folders.insert(0, Path(info.hub_id))
        known = shape_of(info.name, info.hub_id, tuple(folders))
        if known is not None or info.gguf or not info.hub_id or Path(info.hub_id).is_dir():
            return known
        download = Download(info.hub_id, revision, tuple(HUB_FILES))
        if self.hub is not None and not hub_offline():
            return self.hub.checked(download, client).shape
        return hub_shape(info.hub_id, revision)

    def get(
        self,
        name: str,
        revision: str | None = None,
        backend: str = "transformers",
        dtype: str | None = None,
        client: str = "",
    ) -> Backend:
        """The backend of one (model, revision, engine, dtype), loaded on first use. A hub model
        is checked and downloaded first, at one commit, counted against `client`'s hour unless
        it fails to load."""
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
        checked = when = None
        if download is not None:  # checked and downloaded holding no lock: other runs go on
            checked, when = self.hub.fetch(download, client) or (None, None)
        with self._slot:  # two users asking for one model load it once
            with self._lock:
                if key in self._backends:
                    self._backends.move_to_end(key)
                    return self._backends[key]
                self._make_room()
            try:  # the commit checked is the commit loaded, whatever the head is now
                loaded = self._load(key, checked.commit if checked is not None else None)
            except BaseException:
                if download is not None:  # a model that fails to load costs no budget
                    self.hub.refund(download.repo, client, when)
                raise
            if hasattr(loaded, "memory_budget"):  # the engine checks its prompts' real cost
                loaded.memory_budget = functools.partial(memory_budget, self.public)
                loaded.ledger = self.ledger
            self._hold_weights(key, loaded)
            with self._lock:
                self._backends[key] = loaded
            return loaded

    def _hold_weights(self, key: tuple, loaded: Backend) -> None:
        """Count a loaded model's resident memory in the ledger until the backend is collected
        (a run still holding an unloaded model keeps its memory until it ends)."""
        from rrdemo.memory import resident_bytes

        info = self._resolve(key[0])
        shape = shape_of(info.name, info.hub_id, (cache_dir() / "models" / info.name,))
        hold = ("weights", id(loaded))
        self.ledger.hold(hold, resident_bytes(loaded, shape), f"{info.name}'s weights")
        with contextlib.suppress(TypeError):  # without weak references: counted until replaced
            weakref.finalize(loaded, self.ledger.drop, hold)

    def _forget(self, key: tuple) -> None:
        """Stop keeping the model of `key` (call holding `_lock`); the ledger stops counting it."""
        backend = self._backends.pop(key, None)
        if backend is not None:
            self.ledger.drop(("weights", id(backend)))

    def _load(self, key: tuple, commit: str | None = None) -> Backend:
        name, revision, backend, dtype = key
        options = {**self._options, **({"dtype": dtype} if dtype else {})}
        if commit is not None:
            options["commit"] = commit
        if backend == "transformers":  # the loader's default engine (custom loaders)
            return self._loader(name, revision, **options)
        return self._loader(name, revision, backend=backend, **options)

    def _make_room(self) -> None:
        """Unload least recently used models until one more fits under `max_models`. A run still
        holding an unloaded backend keeps it until it ends; then its memory is freed."""
        loaded = [key for key in self._backends if key[2] is not None]
        for key in loaded[: max(0, len(loaded) - self.max_models + 1)]:
            self._forget(key)

    def ensure(self, specs: Iterable[AgentSpec], client: str = "") -> Iterator[str]:
        """Load every distinct (model, revision, engine) the agents `specs` name, yielding each
        model's name just before a load (none for what is loaded already). An unknown name fails
        with the list of known models."""
        for spec in {(s.model, s.revision, s.backend, s.dtype): s for s in specs}.values():
            if not self._has(spec.model, spec.revision, spec.backend, spec.dtype):
                yield self._resolve(spec.model).name
            self.get(spec.model, spec.revision, spec.backend, spec.dtype, client)

    def for_client(self, client: str) -> ClientPool:
        """This pool as `client` uses it: what it fetches from the hub counts against its hour."""
        return ClientPool(self, client)

    def _put(self, name: str, revision: str | None) -> Backend | None:
        """A `put` backend of `name`: it answers any engine and dtype, and a revision-less one
        any revision (a served model's revision names its weights, not a load)."""
        return self._backends.get((name, revision, None)) or self._backends.get((name, None, None))

    def _has(self, name: str, revision: str | None, backend: str, dtype: str | None) -> bool:
        if self._put(name, revision) is not None:
            return True
        return (self._resolve(name).name, revision, backend, dtype) in self._backends

    def kept(self, specs: Iterable[AgentSpec]) -> list[tuple[tuple, int]]:
        """The models this pool keeps loaded that the agents `specs` do not use, least recently
        used first, each with the memory its weights take (its shape in its engine's bytes;
        0 when nothing says): what the memory budget counts besides a run's own estimate."""
        from rrdemo.memory import resident_bytes

        used = set()
        for spec in specs:
            with contextlib.suppress(RRError):
                used.add((self._resolve(spec.model).name, spec.revision, spec.backend, spec.dtype))
        kept = []
        for key, backend in list(self._backends.items()):
            if key[2] is not None and key not in used:
                info = self._resolve(key[0])  # its recorded or local shape; never the network
                shape = shape_of(info.name, info.hub_id, (cache_dir() / "models" / info.name,))
                kept.append((key, resident_bytes(backend, shape)))
        return kept

    def unload(self, key: tuple) -> None:
        """Stop keeping the model of `key` (a run still holding it keeps it until it ends)."""
        with self._lock:
            self._forget(key)

    def loaded(self) -> list[str]:
        return [key[0] for key in self._backends]

    def release(self) -> None:
        """Unload every loaded model (served backends stay): the next `get` loads again. Whoever
        still holds a backend keeps it until done; then its memory is freed."""
        with self._lock:
            for key in [key for key in self._backends if key[2] is not None]:
                self._forget(key)

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


class ClientPool:
    """A `ModelPool` seen by one client (a web visitor): `admit`, `get` and `ensure` count what
    they fetch from the hub against that client's hour; everything else is the pool's."""

    def __init__(self, pool: ModelPool, client: str) -> None:
        self.pool, self.client = pool, client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pool, name)

    def admit(self, name: str) -> None:
        self.pool.admit(name, self.client)

    def get(
        self,
        name: str,
        revision: str | None = None,
        backend: str = "transformers",
        dtype: str | None = None,
    ) -> Backend:
        return self.pool.get(name, revision, backend, dtype, self.client)

    def ensure(self, specs: Iterable[AgentSpec]) -> Iterator[str]:
        return self.pool.ensure(specs, self.client)

    def shape(self, name: str, revision: str | None = None) -> ModelShape | None:
        return self.pool.shape(name, revision, self.client)
