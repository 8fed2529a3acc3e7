"""Where rrdemo keeps its files: read from the environment when asked, folders made on demand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rrdemo import paths
from rrdemo.paths import cache_dir, data_dir


@pytest.fixture
def elsewhere(tmp_path, monkeypatch) -> Path:
    """A working directory of its own and no configured folders."""
    monkeypatch.chdir(tmp_path)
    for name in ("RRDEMO_DATA_DIR", "RRDEMO_CACHE_DIR", "SPACE_ID"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_the_data_folder_is_the_configured_one_else_data_here(elsewhere, monkeypatch):
    assert data_dir() == Path("data") and (elsewhere / "data").is_dir()
    monkeypatch.setenv("RRDEMO_DATA_DIR", str(elsewhere / "mine" / "deep"))
    assert data_dir() == elsewhere / "mine" / "deep" and data_dir().is_dir()


def test_a_space_keeps_its_data_on_persistent_storage_when_it_can_write_there(
    elsewhere, monkeypatch
):
    storage = elsewhere / "persistent"
    monkeypatch.setattr(paths, "SPACE_STORAGE", storage)
    monkeypatch.setenv("SPACE_ID", "someone/rrdemo")
    assert data_dir() == Path("data")  # no storage mounted
    storage.mkdir()
    assert data_dir() == storage / "rrdemo" and (storage / "rrdemo").is_dir()
    if os.geteuid() != 0:  # root writes anywhere
        storage.chmod(0o500)
        try:
            assert data_dir() == Path("data")
        finally:
            storage.chmod(0o700)
    monkeypatch.setenv("RRDEMO_DATA_DIR", str(elsewhere / "configured"))
    assert data_dir() == elsewhere / "configured"  # the setting wins on a Space too


def test_the_cache_folder_is_the_configured_one_else_dot_cache_here(elsewhere, monkeypatch):
    assert cache_dir() == Path(".cache") / "rrdemo" and (elsewhere / ".cache" / "rrdemo").is_dir()
    monkeypatch.setenv("RRDEMO_CACHE_DIR", str(elsewhere / "c"))
    assert cache_dir() == elsewhere / "c" and cache_dir().is_dir()
