"""What a model source may fetch from the Hugging Face hub: a size cap, read from the hub's
metadata before any download, and a bound on how many distinct hub models it fetches per hour.

The web app's pool always has limits (a visitor may type any `org/name`); the command line's has
them only when the operator sets `RRDEMO_HUB_MAX_GB` (a researcher's own machine downloads what
its user asks for). `HubLimits.fetch` checks the repo's metadata (public, not gated, weights this
app loads, every file's size known, the total under the cap) and only then downloads, into the
hub cache, so the load that follows reads local files.
"""

from __future__ import annotations

import fnmatch
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from rrdemo.backends.registry import ModelInfo
from rrdemo.errors import RRError

HUB_MAX_GB_ENV = "RRDEMO_HUB_MAX_GB"
HUB_PER_HOUR_ENV = "RRDEMO_HUB_MODELS_PER_HOUR"
DEFAULT_MAX_GB = 4.0  # a 1.5B model in bf16 (3.1 GB) fits; a CPU Space has 16 GB of memory
DEFAULT_PER_HOUR = 4  # distinct hub models fetched per hour by the web app
HOUR = 3600.0


@dataclass(frozen=True)
class Download:
    """What loading a model fetches from the hub: the files of `repo` that match `patterns`
    (fnmatch patterns or exact names); `weights` says which of them hold weights."""

    repo: str
    revision: str | None
    patterns: tuple[str, ...]
    weights: tuple[str, ...] = ("*.safetensors",)


def _number(name: str, default: float, kind: Callable[[str], float]) -> float:
    """Environment variable `name` as a positive number (read when called)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = 0
    if not value > 0:
        raise RRError(f"{name} must be a positive number, got {text!r}")
    return value


def hub_offline() -> bool:
    """True when `HF_HUB_OFFLINE` forbids downloads (read when called)."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def gb(size: float) -> str:
    return f"{size / 1e9:.1f} GB"


class HubLimits:
    """A size cap (bytes) and a bound on distinct hub repos fetched per hour (a sliding window)."""

    def __init__(
        self,
        max_bytes: int,
        per_hour: int = DEFAULT_PER_HOUR,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_bytes = max_bytes
        self.per_hour = per_hour
        self._clock = clock
        self._fetched: dict[str, float] = {}  # repo -> when it was first fetched in the window
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, public: bool) -> HubLimits | None:
        """The limits the operator set (read when called): always for a `public` source (the web
        app), defaults filled in; for the command line only when `RRDEMO_HUB_MAX_GB` is set."""
        if not public and not os.environ.get(HUB_MAX_GB_ENV, "").strip():
            return None
        max_gb = _number(HUB_MAX_GB_ENV, DEFAULT_MAX_GB, float)
        per_hour = int(_number(HUB_PER_HOUR_ENV, DEFAULT_PER_HOUR, int))
        return cls(int(max_gb * 1e9), per_hour)

    @property
    def max_gb(self) -> float:
        return self.max_bytes / 1e9

    def fits(self, size_gb: float | None) -> bool:
        """Whether a model of `size_gb` (None: unknown) is under the cap."""
        return size_gb is not None and size_gb * 1e9 <= self.max_bytes

    def refuse_size(self, name: str, size: float) -> RRError:
        return RRError(
            f"model {name!r} weighs about {gb(size)}, over this app's limit of "
            f"{gb(self.max_bytes)} ({HUB_MAX_GB_ENV}); pick a smaller model"
        )

    def offers(self, info: ModelInfo) -> bool:
        """Whether the web app's model list offers registry model `info`: shipped models always,
        hub models when their recorded size is under the cap and their licence is not gated."""
        return info.offline or (not info.gated and self.fits(info.size_gb))

    def admit(self, info: ModelInfo) -> None:
        """Refuse, before anything is fetched or asked of the hub, a registry model whose recorded
        size is over the cap or whose licence is gated (shipped models load from their file), and
        a hub model not fetched this hour once the hour's budget is spent."""
        if not info.offline and info.size_gb is not None:
            if not self.fits(info.size_gb):
                raise self.refuse_size(info.name, info.size_gb * 1e9)
            if info.gated:
                raise RRError(_gated(info.hub_id or info.name))
        if not info.offline and info.hub_id and not hub_offline():
            reason = self.budget_left(info.hub_id)
            if reason is not None:
                raise RRError(reason)

    def _spent(self, repo: str) -> str | None:
        """Why `repo` may not be fetched now, or None (call holding `_lock`)."""
        now = self._clock()
        for known, when in list(self._fetched.items()):
            if now - when >= HOUR:
                del self._fetched[known]
        if repo in self._fetched or len(self._fetched) < self.per_hour:
            return None
        wait = HOUR - (now - min(self._fetched.values()))
        return (
            f"this app fetches at most {self.per_hour} different hub models per hour "
            f"({HUB_PER_HOUR_ENV}); try {repo!r} again in {math.ceil(wait / 60)} minutes, or pick "
            "a model that is loaded already"
        )

    def budget_left(self, repo: str) -> str | None:
        """Why `repo` may not be fetched now (the hour's distinct models are spent), or None."""
        with self._lock:
            return self._spent(repo)

    def _spend(self, repo: str) -> None:
        """Count `repo` against the hour's budget, or refuse it when the budget is spent."""
        with self._lock:
            reason = self._spent(repo)
            if reason is None:
                self._fetched.setdefault(repo, self._clock())
        if reason is not None:
            raise RRError(reason)

    def check(self, download: Download) -> list[str]:
        """The files `download` would fetch, read from the hub's metadata; RRError when the repo
        is private, gated or disabled, has no weights this app loads, lists a file of unknown
        size, or weighs more than the cap. Nothing is downloaded."""
        from huggingface_hub import HfApi
        from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

        repo = download.repo
        try:
            info = HfApi().model_info(repo, revision=download.revision, files_metadata=True)
        except GatedRepoError:
            raise RRError(_gated(repo)) from None
        except RepositoryNotFoundError:
            raise RRError(
                f"hub model {repo!r} was not found (or is private): this app loads public models"
            ) from None
        except Exception as exc:  # network, bad revision, unexpected answer
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise RRError(
                f"could not read the size of hub model {repo!r} before downloading it, so it is "
                f"refused: {first}"
            ) from None
        if info.private:
            raise RRError(f"hub model {repo!r} is private: this app loads public models only")
        if info.gated:
            raise RRError(_gated(repo))
        if info.disabled:
            raise RRError(f"hub model {repo!r} is disabled on the hub")
        files = [
            s
            for s in info.siblings or []
            if any(fnmatch.fnmatch(s.rfilename, p) for p in download.patterns)
        ]
        if not any(any(fnmatch.fnmatch(s.rfilename, w) for w in download.weights) for s in files):
            raise RRError(
                f"hub model {repo!r} has no weights this app can load "
                f"({', '.join(download.weights)} files)"
            )
        unknown = [s.rfilename for s in files if s.size is None]
        if unknown:
            raise RRError(
                f"the hub does not say how large {unknown[0]!r} of {repo!r} is, so the model is "
                "refused (this app downloads only what it can measure first)"
            )
        total = sum(s.size for s in files)
        if total > self.max_bytes:
            raise self.refuse_size(repo, total)
        return [s.rfilename for s in files]

    def fetch(self, download: Download) -> None:
        """Check `download` (`check`), count it against the hour's budget, then download exactly
        the files checked into the hub cache. With `HF_HUB_OFFLINE` set nothing can be downloaded:
        the cache answers or the load fails, so the metadata is not asked."""
        if hub_offline():
            return
        files = self.check(download)
        self._spend(download.repo)
        from huggingface_hub import snapshot_download

        try:
            snapshot_download(download.repo, revision=download.revision, allow_patterns=files)
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise RRError(f"could not download hub model {download.repo!r}: {first}") from None


def _gated(repo: str) -> str:
    return (
        f"hub model {repo!r} is gated (its licence must be accepted): this app loads ungated models"
    )
