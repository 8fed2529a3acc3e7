"""The models users can name: the registry, hub ids, local files and folders (the command
line), and what the web app's model boxes accept."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from rrdemo.backends.registry import (
    REGISTRY,
    describe_models,
    gguf_available,
    gguf_path,
    public_model,
    refused,
    resolve,
    shipped_gguf,
    thinking_for,
)
from rrdemo.errors import RRError

PATHS = [
    "/etc",
    "/etc/passwd",
    "/nonexistent/model.gguf",
    "../../etc/passwd",
    "./",
    "~/.cache",
    "a/b/c",
    "org/name.gguf",
    "org/../etc",
    "C:\\models\\x.gguf",
    "",
]


@pytest.mark.parametrize("name", PATHS)
def test_paths_and_files_are_refused_with_one_message(name: str) -> None:
    with pytest.raises(RRError) as refusal:
        public_model(name)
    assert str(refusal.value) == refused(name)


def test_an_existing_and_a_missing_file_get_the_same_refusal(tmp_path: Path) -> None:
    real = tmp_path / "real.gguf"
    real.write_bytes(b"GGUF")
    replies = []
    for path in (real, tmp_path / "missing.gguf", tmp_path, tmp_path / "missing"):
        with pytest.raises(RRError) as refusal:
            public_model(str(path))
        replies.append(str(refusal.value).replace(str(path), "NAME"))
    assert len(set(replies)) == 1  # no existence oracle


def test_a_hub_id_loads_from_the_hub_even_where_a_folder_has_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data" / "leaderboard.db").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    info = public_model("data/leaderboard.db")
    assert info.hub_only and info.hub_id == "data/leaderboard.db"
    assert public_model("smollm2").name == "smollm2" and not public_model("SmolLM2").hub_only


def test_operator_folders_allow_their_files_only(tmp_path: Path, monkeypatch) -> None:
    allowed = tmp_path / "models"
    allowed.mkdir()
    (allowed / "mine.gguf").write_bytes(b"GGUF")
    (tmp_path / "other.gguf").write_bytes(b"GGUF")
    monkeypatch.setenv("RRDEMO_MODEL_DIRS", str(allowed))
    assert public_model(str(allowed / "mine.gguf")).gguf == str(allowed / "mine.gguf")
    for outside in (tmp_path / "other.gguf", allowed / ".." / "other.gguf", allowed):
        with pytest.raises(RRError, match="not allowed here"):
            public_model(str(outside))
    (allowed / "escape.gguf").symlink_to(tmp_path / "other.gguf")
    with pytest.raises(RRError, match="not allowed here"):
        public_model(str(allowed / "escape.gguf"))


# -- the command line: any name resolves to an entry -------------------------------------------------
def test_registry_names_resolve_in_any_case_and_unknown_bare_names_list_the_known_ones() -> None:
    assert resolve("SMOLLM2") is REGISTRY["smollm2"]
    with pytest.raises(RRError) as refusal:
        resolve("smollm3")
    assert all(name in str(refusal.value) for name in REGISTRY)
    assert set(describe_models().split("\n")) == {
        f"  {name}: {info.description}" for name, info in REGISTRY.items()
    }


def test_hub_ids_folders_and_gguf_files_get_entries_of_their_own(tmp_path: Path) -> None:
    hub = resolve("org/model")
    assert (hub.hub_id, hub.offline, hub.gguf) == ("org/model", False, None)
    assert resolve(str(tmp_path)).hub_id == str(tmp_path)  # a local folder
    file = tmp_path / "mine.gguf"
    with pytest.raises(RRError, match="does not exist"):
        resolve(str(file))
    file.write_bytes(b"GGUF")
    info = resolve(str(file))
    assert (info.offline, info.gguf) == (True, str(file))
    assert gguf_path(info) == file and gguf_available(info)


def test_where_llama_cpp_finds_a_gguf(monkeypatch) -> None:
    qwen = REGISTRY["qwen2.5-coder-0.5b"]  # shipped in parts, with an official copy on the hub
    assert gguf_available(qwen) and not gguf_available(qwen, revision="abc123")
    assert gguf_path(qwen, revision="abc123") is None  # a pinned revision comes from the hub
    hub_only = resolve("org/model")
    assert gguf_path(hub_only) is None and not gguf_available(hub_only)
    assert shipped_gguf(hub_only) is None
    monkeypatch.setenv("RRDEMO_OFFLINE_FROM_HUB", "1")
    assert gguf_path(REGISTRY["smollm2"]) is None and not gguf_available(REGISTRY["smollm2"])


def test_thinking_follows_the_registry_entry_of_a_name_or_its_hub_id(monkeypatch) -> None:
    assert not any(thinking_for(name) for name in REGISTRY)  # off for RR by default
    entry = REGISTRY["Qwen/Qwen3-30B-A3B"]
    monkeypatch.setitem(REGISTRY, "qwen3", replace(entry, name="qwen3", thinking=True))
    assert thinking_for("qwen3") and not thinking_for("org/unlisted")
