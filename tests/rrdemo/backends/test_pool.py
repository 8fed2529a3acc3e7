"""The model pool: each distinct model loaded once per process, served backends beside the loaded
ones, a bound on what stays loaded, and the names a public pool admits."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrdemo.backends.pool import ModelPool, default_max_models
from rrdemo.config import AgentSpec
from rrdemo.errors import RRError
from tests.support.fakes import FakeBackend


def _counting_loader(loads: list[str]):
    def load(name: str, revision=None, **options) -> FakeBackend:
        loads.append(name)
        return FakeBackend(name, lambda prompt: "A")

    return load


def test_a_public_pool_refuses_before_loading_and_keeps_at_most_max_models() -> None:
    loads: list[str] = []
    pool = ModelPool(_counting_loader(loads), public=True, max_models=2, hub=None)
    with pytest.raises(RRError, match="not allowed here"):
        pool.get("/etc/passwd")
    with pytest.raises(RRError, match="not allowed here"):
        pool.admit("/tmp/x.gguf")
    for name in ("smollm2", "org/one", "org/two", "smollm2", "org/three"):
        pool.get(name)
    assert loads == ["smollm2", "org/one", "org/two", "smollm2", "org/three"]
    assert pool.loaded() == ["smollm2", "org/three"]  # least recently used went first
    pool.put(FakeBackend("served", lambda prompt: "A"))  # served models do not count
    pool.admit("served")
    assert set(pool.loaded()) == {"smollm2", "org/three", "served"}


def test_the_command_line_pool_still_takes_paths(tmp_path: Path) -> None:
    loads: list[str] = []
    (tmp_path / "mine.gguf").write_bytes(b"GGUF")
    ModelPool(_counting_loader(loads)).get(str(tmp_path / "mine.gguf"))
    assert loads == [str(tmp_path / "mine.gguf")]


def test_the_bound_is_an_operator_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RRDEMO_MAX_MODELS", "3")
    assert default_max_models() == 3 and ModelPool().max_models == 3
    monkeypatch.setenv("RRDEMO_MAX_MODELS", "lots")
    with pytest.raises(RRError, match="RRDEMO_MAX_MODELS must be a whole number"):
        default_max_models()
    monkeypatch.delenv("RRDEMO_MAX_MODELS")
    assert 1 <= default_max_models() <= 4


def test_ensure_loads_each_distinct_model_once_and_names_only_new_loads() -> None:
    loads: list[tuple] = []

    def loader(name: str, revision: str | None, **options) -> FakeBackend:
        loads.append((name, revision, options.get("backend", "transformers")))
        return FakeBackend(name, lambda prompt: "x")

    pool = ModelPool(loader=loader)
    specs = [AgentSpec(model="smollm2"), AgentSpec(model="smollm2"), AgentSpec(model="gemma3-270m")]
    assert list(pool.ensure(specs)) == ["smollm2", "gemma3-270m"]
    assert loads == [("smollm2", None, "transformers"), ("gemma3-270m", None, "transformers")]
    assert list(pool.ensure(specs)) == []  # loaded already: nothing to say, nothing loaded
    assert len(loads) == 2
    with pytest.raises(RRError, match="unknown model 'nosuch'"):
        list(pool.ensure([AgentSpec(model="nosuch")]))


def test_each_engine_of_a_model_loads_once_and_the_loader_hears_which() -> None:
    loads: list[tuple] = []

    def loader(name: str, revision: str | None, **options) -> FakeBackend:
        loads.append((name, revision, options))
        return FakeBackend(name, lambda prompt: "x")

    pool = ModelPool(loader=loader, max_models=4)
    plain = pool.get("smollm2")
    assert pool.get("SmolLM2") is plain  # registry names in any case are one model
    assert pool.get("smollm2", backend="llamacpp") is not plain
    assert pool.get("smollm2", "v2") is not plain
    assert loads == [
        ("smollm2", None, {}),  # the loader's default engine is not named
        ("smollm2", None, {"backend": "llamacpp"}),
        ("smollm2", "v2", {}),
    ]


def test_release_unloads_every_model_and_keeps_served_ones() -> None:
    loads: list[str] = []

    def loader(name: str, revision: str | None, **options) -> FakeBackend:
        loads.append(name)
        return FakeBackend(name, lambda prompt: "x")

    pool = ModelPool(loader=loader)
    served = FakeBackend("my-server", lambda prompt: "x")
    pool.put(served)
    first = pool.get("smollm2")
    pool.get("gemma3-270m")
    pool.release()
    assert pool.loaded() == ["my-server"] and pool.get("my-server") is served
    assert pool.get("smollm2") is not first  # loaded again
    assert loads == ["smollm2", "gemma3-270m", "smollm2"]


def test_a_served_backend_answers_every_engine_and_says_where_it_is() -> None:
    pool = ModelPool(loader=lambda *a, **k: pytest.fail("a served model must not load"))
    served = FakeBackend("my-server", lambda prompt: "x")
    pool.put(served)
    assert pool.get("my-server") is pool.get("my-server", backend="llamacpp") is served
    assert list(pool.ensure([AgentSpec("my-server")])) == []  # nothing to load
    assert pool.sources() == {"my-server": "served / built in"}


def test_a_served_seat_naming_its_weights_revision_finds_its_server() -> None:
    pool = ModelPool(loader=lambda *a, **k: pytest.fail("a served model must not load"))
    served = FakeBackend("llama70b", lambda prompt: "x")
    pool.put(served)
    seat = AgentSpec("llama70b", revision="abc", backend="openai", hub_id="org/weights")
    assert pool.get(seat.model, seat.revision, seat.backend) is served
    assert list(pool.ensure([seat])) == []


def test_an_unknown_engine_is_refused() -> None:
    with pytest.raises(RRError, match="unknown backend 'vllm'"):
        ModelPool(preferred_backend="vllm")
