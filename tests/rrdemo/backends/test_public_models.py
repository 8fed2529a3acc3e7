"""What the web app's model boxes accept, and how many models its pool keeps loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrdemo.backends.pool import ModelPool, default_max_models
from rrdemo.backends.registry import public_model, refused
from rrdemo.errors import RRError
from tests.support.fakes import FakeBackend

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


def _counting_loader(loads: list[str]):
    def load(name: str, revision=None, **options) -> FakeBackend:
        loads.append(name)
        return FakeBackend(name, lambda prompt: "A")

    return load


def test_a_public_pool_refuses_before_loading_and_keeps_at_most_max_models() -> None:
    loads: list[str] = []
    pool = ModelPool(_counting_loader(loads), public=True, max_models=2)
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
