"""Which engine runs an agent's model (llama.cpp for GGUF files when it is installed, else
transformers), and the device and dtype it loads on."""

from __future__ import annotations

import logging

import pytest

from rrdemo.backends import choice
from rrdemo.backends.choice import choose_backend, choose_device_dtype, with_backends
from rrdemo.config import AgentSpec, RunConfig
from rrdemo.errors import RRError


@pytest.fixture
def llama_installed(monkeypatch):
    """As if llama-cpp-python imported here."""
    monkeypatch.setattr(choice, "llama_cpp_missing", lambda: None)


def test_transformers_is_chosen_for_hub_models_and_when_asked():
    assert choose_backend("Qwen/Qwen2.5-0.5B-Instruct", "auto") == "transformers"
    assert choose_backend("Qwen/Qwen2.5-0.5B-Instruct", "llamacpp") == "transformers"
    assert choose_backend("smollm2", "transformers") == "transformers"
    with pytest.raises(RRError, match="unknown backend 'vllm'"):
        choose_backend("smollm2", "vllm")
    with pytest.raises(RRError, match="unknown backend"):
        AgentSpec("smollm2", backend="onnx")


def test_without_llama_cpp_auto_falls_back_and_an_explicit_request_is_refused(monkeypatch):
    monkeypatch.setattr(choice, "llama_cpp_missing", lambda: "ImportError: no llama_cpp")
    assert choose_backend("smollm2", "auto") == "transformers"
    with pytest.raises(RRError, match="needs llama-cpp-python.*make llama"):
        choose_backend("smollm2", "llamacpp")


def test_a_local_gguf_file_runs_on_llama_cpp(tmp_path, llama_installed):
    path = tmp_path / "mine.gguf"
    path.write_bytes(b"GGUF")
    assert choose_backend(str(path)) == choose_backend(str(path), "llamacpp") == "llamacpp"
    assert choose_backend(str(path), "transformers") == "transformers"


def test_a_registry_model_runs_on_llama_cpp_only_where_its_gguf_is(monkeypatch, llama_installed):
    monkeypatch.setattr(choice, "gguf_available", lambda info, revision: revision is None)
    assert choose_backend("smollm2") == choose_backend("SmolLM2") == "llamacpp"  # any case
    assert choose_backend("smollm2", revision="abc123") == "transformers"  # a pinned revision
    monkeypatch.setattr(choice, "gguf_available", lambda info, revision: False)
    assert choose_backend("smollm2", "llamacpp") == "transformers"


def test_with_backends_chooses_for_local_agents_and_leaves_served_ones(
    monkeypatch, llama_installed
):
    monkeypatch.setattr(choice, "gguf_available", lambda info, revision: True)
    config = RunConfig(
        agents=(
            AgentSpec("smollm2", True),
            AgentSpec("served.gguf"),  # a served name is never looked up as a file
            AgentSpec("org/some-hub-model"),
        )
    )
    with pytest.raises(RRError, match="does not exist"):
        with_backends(config, "auto")
    chosen = with_backends(config, "auto", served={"served.gguf"})
    assert [a.backend for a in chosen.agents] == ["llamacpp", "transformers", "transformers"]
    assert [(a.model, a.corrupted) for a in chosen.agents] == [
        (a.model, a.corrupted) for a in config.agents
    ]
    assert with_backends(config, "transformers") == config


def test_a_missing_llama_cpp_is_logged_once(monkeypatch, caplog):
    monkeypatch.setattr(choice, "available", lambda: "ImportError: no llama_cpp")
    choice.llama_cpp_missing.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger=choice.__name__):
            assert (
                choice.llama_cpp_missing()
                == choice.llama_cpp_missing()
                == ("ImportError: no llama_cpp")
            )
        assert [r.getMessage().count("no llama_cpp") for r in caplog.records] == [1]
    finally:
        choice.llama_cpp_missing.cache_clear()  # later calls see this machine again


def test_device_and_dtype_choice() -> None:
    assert choose_device_dtype(cuda=False, bf16=False) == ("cpu", "float32")
    assert choose_device_dtype(cuda=False, bf16=True) == ("cpu", "float32")  # CPU: unchanged
    assert choose_device_dtype(cuda=True, bf16=True) == ("cuda", "bfloat16")
    assert choose_device_dtype(cuda=True, bf16=False) == ("cuda", "float16")  # e.g. a T4
