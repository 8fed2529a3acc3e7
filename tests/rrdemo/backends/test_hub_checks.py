"""Reading a hub model's size is a fetch: the memory estimate's checks count against the
visitor's hour before the hub is asked anything, and the load that follows reads the commit the
estimate read (against a loopback hub that records every request)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rrdemo.backends.hub_limits import HUB_MAX_GB_ENV, HubLimits
from rrdemo.backends.pool import ModelPool
from rrdemo.config import AgentSpec, RunConfig
from rrdemo.errors import RRError
from rrdemo.memory import check_memory
from tests.support.fakes import FakeBackend
from tests.support.localhub import LocalHub, point_client_at, serve

TINY_CONFIG = dict(
    vocab_size=16, hidden_size=8, intermediate_size=16, num_hidden_layers=1,
    num_attention_heads=2, tie_word_embeddings=True, torch_dtype="float32",
)  # fmt: skip
REPOS = [f"org{i}/tiny" for i in range(12)]


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    with serve(LocalHub()) as hub:
        for repo in REPOS:
            hub.add_file("model", repo, "config.json", json.dumps(TINY_CONFIG).encode())
            hub.add_file("model", repo, "model.safetensors", b"\0" * 1000)
        point_client_at(hub, monkeypatch, tmp_path / "cache")
        monkeypatch.delenv(HUB_MAX_GB_ENV, raising=False)
        yield hub


def _loader(seen: list):
    from rrdemo.backends.loading import _hub_snapshot
    from rrdemo.backends.registry import public_model

    def load(name: str, revision=None, commit=None, **options) -> FakeBackend:
        _hub_snapshot(public_model(name), commit or revision)
        seen.append((name, commit))
        return FakeBackend(name, lambda prompt: "A")

    return load


def test_twelve_hub_models_in_one_run_are_refused_at_the_fifth_check(hub) -> None:
    """The probe's per-agent list of 12 hub ids made 77 hub requests and 4 weight downloads
    before its refusal; now the estimate's fifth check is refused before it asks the hub."""
    pool = ModelPool(_loader([]), public=True, hub=HubLimits(int(4e9), per_hour=4))
    visitor = pool.for_client("ip:10.0.0.66")
    run = RunConfig(agents=tuple(AgentSpec(repo) for repo in REPOS), k=4, max_tokens=8)
    for repo in REPOS:
        visitor.admit(repo)  # nothing fetched this hour: each is admitted by itself
    with pytest.raises(RRError, match="at most 4 different hub models per hour"):
        check_memory([run], visitor, public=True)
    assert (
        hub.served()
        == [  # four configs, no weight file
            f"/{repo}/resolve/{hub.head('model', repo)}/config.json" for repo in REPOS[:4]
        ]
    )
    asked = {p.split("?")[0] for _, p, _ in hub.requests if p.startswith("/api/models/")}
    assert asked == {f"/api/models/{repo}" for repo in REPOS[:4]}
    assert pool.for_client("ip:10.0.0.2").shape(REPOS[5]) is not None  # another visitor's hour


def test_the_load_reads_the_commit_the_memory_check_read(hub) -> None:
    seen: list = []
    pool = ModelPool(_loader(seen), public=True, hub=HubLimits(int(4e9)))
    visitor = pool.for_client("ip:10.0.0.2")
    run = RunConfig(agents=(AgentSpec(REPOS[0]),), k=4, max_tokens=8)
    checked = hub.head("model", REPOS[0])
    check_memory([run], visitor, public=True)
    hub.grow("model", REPOS[0], "notes.md", b"the head moves")  # a new commit
    assert hub.head("model", REPOS[0]) != checked
    visitor.get(REPOS[0])
    assert seen == [(REPOS[0], checked)]
    heads = [p for _, p, _ in hub.requests if p.startswith("/api/models/") and "/tree/" not in p]
    assert len(heads) == 1  # the head was resolved once, by the memory check
