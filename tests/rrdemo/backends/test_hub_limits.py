"""What a model source may fetch from the hub: the size cap read from the hub's metadata before
any download (against a loopback hub that records every request), the licence and visibility
checks, the hour's budget of distinct models, the registry's recorded sizes, and a download that
holds no lock other runs need."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rrdemo.backends.hub_limits import HUB_MAX_GB_ENV, Download, HubLimits
from rrdemo.backends.loading import HUB_FILES
from rrdemo.backends.pool import ModelPool
from rrdemo.errors import RRError
from tests.support.fakes import FakeBackend
from tests.support.localhub import LocalHub, point_client_at, serve

HUGE = "big-org/huge-140b"  # 30 shards of 4.7 GB: 141 GB
SMALL = "small-org/tiny"
# A decoder of 792 parameters: its 1000-byte weights cover them.
TINY_CONFIG = dict(
    vocab_size=16, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
    num_attention_heads=2, tie_word_embeddings=True, torch_dtype="float32",
)  # fmt: skip


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    with serve(LocalHub()) as hub:
        shards = {f"model-{i:05d}-of-00030.safetensors": 4_700_000_000 for i in range(1, 31)}
        hub.add_file("model", HUGE, "config.json", b"{}")
        hub.declare("model", HUGE, shards)
        hub.add_file("model", SMALL, "config.json", json.dumps(TINY_CONFIG).encode())
        hub.add_file("model", SMALL, "model.safetensors", b"\0" * 1000)
        hub.add_file("model", SMALL, "README.md", b"not fetched")
        point_client_at(hub, monkeypatch, tmp_path / "cache")
        monkeypatch.delenv(HUB_MAX_GB_ENV, raising=False)
        yield hub


def _downloads(hub: LocalHub) -> list[str]:
    return [path for method, path, _ in hub.requests if "/resolve/" in path]


def _never(*args, **options):
    pytest.fail("a refused model must not reach the loader")


def _loader(loads: list[str]):
    def load(name: str, revision=None, **options) -> FakeBackend:
        loads.append(name)
        return FakeBackend(name, lambda prompt: "A")

    return load


def test_a_140_gb_hub_model_is_refused_from_its_metadata_before_any_download(hub) -> None:
    pool = ModelPool(_never, public=True)  # the web app's pool: limits from the environment
    pool.admit(HUGE)  # a name of the allowed shape, not fetched this hour: admitted
    with pytest.raises(RRError, match=r"weighs about 141\.0 GB, over this app's limit of 4\.0 GB"):
        list(pool.ensure([_spec(HUGE)]))
    assert _downloads(hub) == []  # no weight file (nor any other file) was requested
    assert any(path.startswith(f"/api/models/{HUGE}") for _, path, _ in hub.requests)
    assert pool.loaded() == []


def _spec(model: str):
    from rrdemo.config import AgentSpec

    return AgentSpec(model=model)


@pytest.mark.parametrize(
    ("files", "flags", "message"),
    [
        ({"model.safetensors": 1000}, {"gated": "manual"}, "is gated"),
        ({"model.safetensors": 1000}, {"private": True}, "is private"),
        ({"model.safetensors": 1000}, {"disabled": True}, "is disabled"),
        ({"pytorch_model.bin": 1000}, {}, r"no weights this app can load \(\*\.safetensors"),
        ({"model.safetensors": None}, {}, "does not say how large 'model.safetensors'"),
    ],
)
def test_gated_private_weightless_and_unmeasured_repos_are_refused(
    hub, files: dict, flags: dict, message: str
) -> None:
    hub.declare("model", "odd/repo", files, **flags)
    with pytest.raises(RRError, match=message):
        ModelPool(_never, public=True).get("odd/repo")
    with pytest.raises(RRError, match="was not found"):
        ModelPool(_never, public=True).get("nobody/nothing")
    assert _downloads(hub) == []


def test_a_small_public_model_is_checked_then_downloaded_before_it_loads(hub) -> None:
    loads: list[str] = []
    pool = ModelPool(_loader(loads), public=True)
    pool.get(SMALL)
    assert loads == [SMALL]
    fetched = sorted(path.rsplit("/", 1)[1] for path in hub.served())
    assert fetched == ["config.json", "model.safetensors"]  # what the loader reads, no README
    limits = HubLimits(999)  # 999 bytes: the 1000-byte weights are over it
    with pytest.raises(RRError, match="over this app's limit"):
        limits.check(Download(SMALL, None, tuple(HUB_FILES)))


def test_the_registry_carries_sizes_and_the_model_list_offers_what_fits() -> None:
    pool = ModelPool(_never, public=True, hub=HubLimits(int(4e9)))
    offered = pool.offered()
    assert {"smollm2", "gemma3-270m", "Qwen/Qwen2.5-0.5B-Instruct"} <= set(offered)
    assert "meta-llama/Llama-3.3-70B-Instruct" not in offered  # 141 GB
    assert "Qwen/Qwen2.5-32B-Instruct" not in offered
    assert "meta-llama/Llama-3.2-1B-Instruct" not in offered  # small, but gated
    # Typed anyway, they are refused at once from the registry: the hub is not asked.
    with pytest.raises(RRError, match=r"weighs about 141\.1 GB, over this app's limit of 4\.0 GB"):
        pool.admit("meta-llama/Llama-3.3-70B-Instruct")
    with pytest.raises(RRError, match="is gated"):
        pool.admit("meta-llama/Llama-3.2-1B-Instruct")
    assert set(ModelPool(_never, hub=None).offered()) == set(pool.offered()) | {
        "meta-llama/Llama-3.3-70B-Instruct",
        "meta-llama/Llama-3.2-1B-Instruct",
        "meta-llama/Llama-3.1-8B-Instruct",
        "Qwen/Qwen2.5-32B-Instruct",
        "Qwen/Qwen3-30B-A3B",
        "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
    }


def test_at_most_a_few_distinct_hub_models_per_hour(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")  # offline, nothing is fetched: no budget to spend
    now = [0.0]
    limits = HubLimits(int(4e9), per_hour=2, clock=lambda: now[0])
    limits._spend("a/one")
    limits._spend("a/two")
    limits._spend("a/one")  # fetched this hour already: free
    with pytest.raises(RRError, match=r"at most 2 different hub models per hour.*in 60 minutes"):
        limits._spend("a/three")
    now[0] = 3000.0
    assert "in 10 minutes" in limits.budget_left("a/three")
    pool = ModelPool(_never, public=True, hub=limits)
    with pytest.raises(RRError, match="different hub models per hour"):
        pool.admit("a/three")  # refused before the hub is asked anything
    now[0] = 3600.0
    assert limits.budget_left("a/three") is None


def test_the_command_line_has_no_cap_unless_the_operator_sets_one(monkeypatch) -> None:
    monkeypatch.delenv(HUB_MAX_GB_ENV, raising=False)
    loads: list[str] = []
    pool = ModelPool(_loader(loads))
    assert pool.hub is None
    pool.admit("meta-llama/Llama-3.3-70B-Instruct")
    pool.get("org/anything")
    assert loads == ["org/anything"]
    monkeypatch.setenv(HUB_MAX_GB_ENV, "20")
    assert ModelPool(_never).hub.max_bytes == 20 * 10**9
    assert ModelPool(_never, public=True).hub.max_bytes == 20 * 10**9
    for bad in ("lots", "-1", "0", "nan"):
        monkeypatch.setenv(HUB_MAX_GB_ENV, bad)
        with pytest.raises(RRError, match=f"{HUB_MAX_GB_ENV} must be a positive number"):
            HubLimits.from_env(public=True)


class _SlowHub(HubLimits):
    """Limits whose download waits until the test lets it go."""

    def __init__(self) -> None:
        super().__init__(int(4e9))
        self.started, self.release = threading.Event(), threading.Event()

    def fetch(self, download: Download, client: str = "") -> tuple[None, None]:
        if download.repo == "org/big":
            self.started.set()
            assert self.release.wait(120)
        return None, None


def test_a_download_holds_no_lock_that_other_runs_need(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "mine").mkdir()
    monkeypatch.setenv("RRDEMO_MODEL_DIRS", str(tmp_path))
    slow = _SlowHub()
    loads: list[str] = []
    pool = ModelPool(_loader(loads), public=True, hub=slow, max_models=2)
    pool.get("smollm2")
    fetching = threading.Thread(target=pool.get, args=("org/big",))
    fetching.start()
    try:
        assert slow.started.wait(120)
        started = time.monotonic()
        assert pool.get("smollm2") is pool.get("smollm2")  # a loaded model answers at once
        pool.get(str(tmp_path / "mine"))  # another model still loads (nothing to download)
        # A lock held by the download would block these until its release (120 s away, in the
        # `finally`); at once means seconds at most, so half of that is wide for a loaded machine.
        assert time.monotonic() - started < 60
        assert loads == ["smollm2", str(tmp_path / "mine")]  # the fetching one took no slot
    finally:
        slow.release.set()
        fetching.join(120)
    assert loads == ["smollm2", str(tmp_path / "mine"), "org/big"]


GROWER = "grow-org/grower"
HOLLOW = "hollow-org/llama-0.8b"
# A Llama of about 0.83 billion parameters, declared in a few hundred bytes.
HOLLOW_CONFIG = dict(
    vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=16,
    num_attention_heads=32, num_key_value_heads=4, torch_dtype="bfloat16",
)  # fmt: skip


class _GrowsAfterCheck(HubLimits):
    """Limits whose repo gains a file three times the cap right after each check."""

    def __init__(self, hub: LocalHub) -> None:
        super().__init__(20_000)
        self.hub = hub

    def check(self, download: Download):
        checked = super().check(download)
        self.hub.grow("model", download.repo, "model-2.safetensors", b"\1" * 60_000)
        return checked


def _snapshot_loader(seen: list[tuple[str, list[str]]]):
    """A loader that reads the hub copy the real load reads (`_hub_snapshot`) and lists it."""
    from rrdemo.backends.loading import _hub_snapshot
    from rrdemo.backends.registry import public_model

    def load(name: str, revision=None, commit=None, **options) -> FakeBackend:
        folder = Path(_hub_snapshot(public_model(name), commit or revision))
        seen.append((commit, sorted(p.name for p in folder.iterdir())))
        return FakeBackend(name, lambda prompt: "A")

    return load


def test_a_repo_that_grows_after_its_check_loads_the_commit_checked(hub) -> None:
    hub.add_file("model", GROWER, "config.json", json.dumps(TINY_CONFIG).encode())
    hub.add_file("model", GROWER, "model.safetensors", b"\0" * 1000)
    checked_head = hub.head("model", GROWER)
    seen: list = []
    pool = ModelPool(_snapshot_loader(seen), public=True, hub=_GrowsAfterCheck(hub))
    pool.get(GROWER)
    assert hub.head("model", GROWER) != checked_head  # the head moved after the check
    assert seen == [(checked_head, ["config.json", "model.safetensors"])]
    assert not [p for p in hub.served() if "model-2.safetensors" in p]  # never downloaded
    assert all(checked_head in p for p in hub.served())  # every file read at the checked commit


def test_a_config_declaring_more_parameters_than_its_weights_hold_is_refused(hub) -> None:
    hub.add_file("model", HOLLOW, "config.json", json.dumps(HOLLOW_CONFIG).encode())
    hub.add_file("model", HOLLOW, "model.safetensors", b"\0" * 3000)  # one tiny tensor
    limits = HubLimits(int(4e9), per_hour=1)
    pool = ModelPool(_never, public=True, hub=limits)
    with pytest.raises(
        RRError, match=r"declares about 0\.8\d billion parameters .* hold 3,000 bytes"
    ):
        pool.get(HOLLOW)
    assert [p.rsplit("/", 1)[1] for p in hub.served()] == ["config.json"]  # no weight fetched
    assert limits.budget_left(SMALL) is None  # the refused repo cost nothing of the hour
    # Weights that do hold the parameters, but more than the cap in their dtype: refused too.
    limits = HubLimits(int(1e9))
    with pytest.raises(RRError, match=r"weighs about 1\.7 GB, over this app's limit of 1\.0 GB"):
        hub.declare("model", HOLLOW, {"model.safetensors": 500_000_000})
        limits.check(Download(HOLLOW, None, tuple(HUB_FILES)))


def test_the_hour_budget_is_per_client_and_a_failed_load_costs_nothing(hub) -> None:
    def failing(name: str, revision=None, **options):
        raise RRError(f"{name} does not load")

    limits = HubLimits(int(4e9), per_hour=1)
    with pytest.raises(RRError, match="does not load"):
        ModelPool(failing, public=True, hub=limits).get(SMALL, client="ip:1")
    assert limits.budget_left(GROWER, "ip:1") is None  # the failed load was not counted
    loads: list[str] = []
    pool = ModelPool(_loader(loads), public=True, hub=limits)
    pool.for_client("ip:1").get(SMALL)
    with pytest.raises(RRError, match="at most 1 different hub models per hour for each visitor"):
        pool.for_client("ip:1").admit(GROWER)
    assert limits.budget_left(GROWER, "ip:2") is None  # another visitor has its own hour
    assert loads == [SMALL]
