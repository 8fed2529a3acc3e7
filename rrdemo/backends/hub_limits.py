"""What a model source may fetch from the Hugging Face hub: a size cap, read from the hub's
metadata and from the model transformers builds from `config.json` on the meta device
(`rrdemo.backends.meta_count`) before any weight is downloaded, and a bound on how many distinct hub
models each visitor fetches per hour.

The web app's pool always has limits (a visitor may type any `org/name`); the command line's has
them only when the operator sets `RRDEMO_HUB_MAX_GB` (a researcher's own machine downloads what
its user asks for). `HubLimits.fetch` resolves the repo's head to a commit and checks its metadata
there (public, not gated, weights this app loads, every file's size known, weight files that hold
the parameters its config declares, the larger of the files and those parameters under the cap);
only then does it download that commit's files, and the load that follows reads that commit.
"""

from __future__ import annotations

import fnmatch
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rrdemo.backends.registry import ModelInfo
from rrdemo.backends.shape import DTYPE_BYTES, ModelShape, read_config
from rrdemo.errors import RRError

HUB_MAX_GB_ENV = "RRDEMO_HUB_MAX_GB"
HUB_PER_HOUR_ENV = "RRDEMO_HUB_MODELS_PER_HOUR"
DEFAULT_MAX_GB = 4.0  # a 1.5B model in bf16 (3.1 GB) fits; a CPU Space has 16 GB of memory
DEFAULT_PER_HOUR = 4  # distinct hub models each visitor of the web app fetches per hour
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


# A weight file holds at least this many bytes per parameter its config declares (4-bit
# quantized weights hold 0.5): fewer, and transformers would fill in the missing ones in memory.
MIN_BYTES_PER_PARAM = 0.5
CONFIG_MAX_BYTES = 1_000_000  # a config.json larger than this is not read
CHECK_SECONDS = 600.0  # how long a check answers for its repo (the memory check, then the load)
CHECKS_KEPT = 64


@dataclass(frozen=True)
class Checked:
    """What `HubLimits.check` measured: the commit the repo's head resolved to (every later step
    reads this commit), the files to fetch, the model's declared shape, the size that counts."""

    commit: str
    files: tuple[str, ...]
    shape: ModelShape | None
    size: int  # bytes: the larger of the files and the declared parameters in their dtype


class HubLimits:
    """A size cap (bytes) and, per client, a bound on distinct hub repos fetched per hour (a
    sliding window); a repo that fails to load is not counted."""

    def __init__(
        self,
        max_bytes: int,
        per_hour: int = DEFAULT_PER_HOUR,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_bytes = max_bytes
        self.per_hour = per_hour
        self._clock = clock
        # client -> repo -> when it was first fetched in the window
        self._fetched: dict[str, dict[str, float]] = {}
        # (repo, revision) -> (when, what was checked): the memory check and the load that
        # follows it read one commit, however the repo's head moves in between
        self._checked: OrderedDict[tuple[str, str | None], tuple[float, Checked]] = OrderedDict()
        self._counted: dict[tuple[str, str], float] = {}  # (client, repo) -> counted by a check
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

    def admit(self, info: ModelInfo, client: str = "") -> None:
        """Refuse, before anything is fetched or asked of the hub, a registry model whose recorded
        size is over the cap or whose licence is gated (shipped models load from their file), and
        a hub model `client` has not fetched this hour once its hour's budget is spent."""
        if not info.offline and info.size_gb is not None:
            if not self.fits(info.size_gb):
                raise self.refuse_size(info.name, info.size_gb * 1e9)
            if info.gated:
                raise RRError(_gated(info.hub_id or info.name))
        if not info.offline and info.hub_id and not hub_offline():
            reason = self.budget_left(info.hub_id, client)
            if reason is not None:
                raise RRError(reason)

    def _spent(self, repo: str, client: str) -> str | None:
        """Why `client` may not fetch `repo` now, or None (call holding `_lock`)."""
        now = self._clock()
        for who, fetched in list(self._fetched.items()):
            for known, when in list(fetched.items()):
                if now - when >= HOUR:
                    del fetched[known]
            if not fetched:
                del self._fetched[who]
        fetched = self._fetched.get(client, {})
        if repo in fetched or len(fetched) < self.per_hour:
            return None
        wait = HOUR - (now - min(fetched.values()))
        return (
            f"this app fetches at most {self.per_hour} different hub models per hour for each "
            f"visitor ({HUB_PER_HOUR_ENV}); try {repo!r} again in {math.ceil(wait / 60)} minutes, "
            "or pick a model that is loaded already"
        )

    def budget_left(self, repo: str, client: str = "") -> str | None:
        """Why `client` may not fetch `repo` now (its hour's distinct models are spent), or None."""
        with self._lock:
            return self._spent(repo, client)

    def _spend(self, repo: str, client: str = "") -> float | None:
        """Count `repo` against `client`'s hour, or refuse it when that is spent. Returns when it
        was counted, None when it was counted already this hour (for `refund`)."""
        with self._lock:
            reason = self._spent(repo, client)
            if reason is None:
                fetched = self._fetched.setdefault(client, {})
                if repo in fetched:
                    return None
                fetched[repo] = self._clock()
                return fetched[repo]
        raise RRError(reason)

    def refund(self, repo: str, client: str, when: float | None) -> None:
        """Take back what `_spend` counted at `when` (the model failed to load)."""
        if when is None:
            return
        with self._lock:
            fetched = self._fetched.get(client, {})
            if fetched.get(repo) == when:
                del fetched[repo]

    def check(self, download: Download) -> Checked:
        """Resolve `download`'s revision to a commit and measure what it would fetch there, from
        the hub's metadata and the commit's `config.json`; RRError when the repo is private, gated
        or disabled, has no weights this app loads, lists a file of unknown size, declares more
        parameters than its weight files hold, or counts more than the cap. Only the config is
        downloaded."""
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
            raise _unreadable(repo, exc) from None
        if info.private:
            raise RRError(f"hub model {repo!r} is private: this app loads public models only")
        if info.gated:
            raise RRError(_gated(repo))
        if info.disabled:
            raise RRError(f"hub model {repo!r} is disabled on the hub")
        if not info.sha:
            raise RRError(f"the hub did not say which commit of {repo!r} it describes: refused")
        files = [
            s
            for s in info.siblings or []
            if any(fnmatch.fnmatch(s.rfilename, p) for p in download.patterns)
        ]
        weights = [
            s for s in files if any(fnmatch.fnmatch(s.rfilename, w) for w in download.weights)
        ]
        if not weights:
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
        if total > self.max_bytes:  # refused before even the config is read
            raise self.refuse_size(repo, total)
        config = next((s for s in files if s.rfilename == "config.json"), None)
        shape = self._declared(repo, info.sha, config.size) if config is not None else None
        size = total
        if shape is not None:
            held = sum(s.size for s in weights)
            if held < shape.params * MIN_BYTES_PER_PARAM:
                raise RRError(
                    f"hub model {repo!r} declares about {shape.params / 1e9:.2f} billion "
                    f"parameters in its config.json, but its weight files hold {held:,} bytes: the "
                    "missing weights would be made up in memory, so it is refused"
                )
            size = max(total, shape.params * DTYPE_BYTES[shape.dtype or "bfloat16"])
        if size > self.max_bytes:
            raise self.refuse_size(repo, size)
        return Checked(info.sha, tuple(s.rfilename for s in files), shape, size)

    @staticmethod
    def _declared(repo: str, commit: str, listed: int | None) -> ModelShape:
        """The shape `config.json` at `commit` declares (RRError when it declares none)."""
        from huggingface_hub import hf_hub_download

        if listed is None or listed > CONFIG_MAX_BYTES:
            raise RRError(f"the config.json of hub model {repo!r} is too large to read: refused")
        try:
            path = hf_hub_download(repo, "config.json", revision=commit)
        except Exception as exc:
            raise _unreadable(repo, exc) from None
        config = read_config(Path(path))
        try:
            if config is None:
                raise RRError("config.json is not a JSON object")
            ModelShape.from_config(config)  # the fields a shape needs
        except RRError as exc:
            raise RRError(
                f"hub model {repo!r} does not declare a size this app can measure ({exc}): refused"
            ) from None
        from rrdemo.backends.meta_count import built_shape

        return built_shape(repo, config)  # its parameters as transformers builds them

    def checked(self, download: Download, client: str = "") -> Checked:
        """`check(download)`, counted against `client`'s hour before the hub is asked anything
        (reading a repo's metadata and config is a fetch: a visitor naming twelve hub models
        is refused at the fifth, not after asking the hub about all twelve), and kept for
        `CHECK_SECONDS`: the memory check and the load that follows it read the same commit."""
        key = (download.repo, download.revision)
        with self._lock:
            kept = self._checked.get(key)
            if kept is not None and self._clock() - kept[0] < CHECK_SECONDS:
                return kept[1]
        when = self._spend(download.repo, client)
        try:
            checked = self.check(download)
        except BaseException:
            self.refund(download.repo, client, when)
            raise
        with self._lock:
            self._checked[key] = (self._clock(), checked)
            self._checked.move_to_end(key)
            while len(self._checked) > CHECKS_KEPT:
                self._checked.popitem(last=False)
            if when is not None:  # a load of it that fails gives this back (`fetch`)
                self._counted[(client, download.repo)] = when
                while len(self._counted) > CHECKS_KEPT:
                    del self._counted[next(iter(self._counted))]
        return checked

    def fetch(self, download: Download, client: str = "") -> tuple[Checked | None, float | None]:
        """Check `download` (`checked`: the check made for the memory estimate, when it is
        recent), count it against `client`'s hour, then download exactly the files checked, at
        the checked commit, into the hub cache. Returns what was checked (None with
        `HF_HUB_OFFLINE`: nothing can be downloaded, the cache answers or the load fails) and
        when it was counted (for `refund` when the load fails)."""
        if hub_offline():
            return None, None
        checked = self.checked(download, client)
        when = self._spend(download.repo, client)
        with self._lock:  # counted by the check just before: the load's to give back
            counted = self._counted.pop((client, download.repo), None)
        when = when if when is not None else counted
        from huggingface_hub import snapshot_download

        try:
            snapshot_download(
                download.repo, revision=checked.commit, allow_patterns=list(checked.files)
            )
        except Exception as exc:
            self.refund(download.repo, client, when)
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
            raise RRError(f"could not download hub model {download.repo!r}: {first}") from None
        return checked, when


def _unreadable(repo: str, exc: Exception) -> RRError:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return RRError(
        f"could not read the size of hub model {repo!r} before downloading it, so it is "
        f"refused: {first}"
    )


def _gated(repo: str) -> str:
    return (
        f"hub model {repo!r} is gated (its licence must be accepted): this app loads ungated models"
    )
