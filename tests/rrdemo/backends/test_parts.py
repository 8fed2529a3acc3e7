"""Assembling a GGUF file from its PyPI slices: built once, checked, reused; a bad slice is named."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rrdemo.backends import parts, registry
from rrdemo.errors import RRError


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def fake_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A three-slice file whose slices are real files in tmp_path (no packages installed)."""
    slices = [b"GGUF" + b"a" * 1000, b"b" * 2000, b"c" * 17]
    sources = {}
    listed = []
    for i, data in enumerate(slices, start=1):
        path = tmp_path / f"slice{i}.bin"
        path.write_bytes(data)
        part = parts.Part(
            f"fake-model-part{i}", f"fake_model_part{i}/data/part0{i}.bin", len(data), _sha(data)
        )
        sources[part.package] = path
        listed.append(part)
    whole = b"".join(slices)
    spec = parts.PartedFile("fake.gguf", "1.0", len(whole), _sha(whole), tuple(listed))
    monkeypatch.setattr(parts, "manifest", lambda: {"fake.gguf": spec})

    def part_path(part, version):
        if part.package not in sources:
            raise ImportError(f"package {part.package} is not installed")
        return sources[part.package]

    monkeypatch.setattr(parts, "part_path", part_path)
    monkeypatch.setenv("RRDEMO_CACHE_DIR", str(tmp_path / "cache"))
    return spec, sources, whole


def test_assembles_once_then_reuses_the_checked_copy(fake_file) -> None:
    spec, sources, whole = fake_file
    path = parts.assemble("fake.gguf", progress=False)
    assert path.read_bytes() == whole
    for source in sources.values():  # a second call reads no slice: the stamp vouches for the copy
        source.unlink()
    assert parts.assemble("fake.gguf", progress=False) == path


def test_a_wrong_slice_is_refused_naming_its_package_and_leaves_no_file(fake_file) -> None:
    spec, sources, _ = fake_file
    sources["fake-model-part2"].write_bytes(b"x" * 2000)  # right size, wrong content
    with pytest.raises(
        RRError, match=r"fake-model-part2.*--force-reinstall fake-model-part2==1\.0"
    ):
        parts.assemble("fake.gguf", progress=False)
    assert not parts.target_path("fake.gguf").exists()
    assert list(parts.target_path("fake.gguf").parent.iterdir()) == []  # no temp file left


def test_a_partial_slice_is_refused_before_anything_is_written(fake_file) -> None:
    spec, sources, _ = fake_file
    sources["fake-model-part3"].write_bytes(b"c" * 5)
    with pytest.raises(RRError, match=r"fake-model-part3 is 5 bytes, 17 expected"):
        parts.assemble("fake.gguf", progress=False)


def test_a_damaged_copy_without_its_stamp_is_rebuilt(fake_file) -> None:
    spec, _, whole = fake_file
    path = parts.assemble("fake.gguf", progress=False)
    path.with_name(path.name + ".ok").unlink()
    path.write_bytes(b"\0" * len(whole))
    assert parts.assemble("fake.gguf", progress=False).read_bytes() == whole


def test_a_missing_package_means_not_installed(fake_file) -> None:
    spec, sources, _ = fake_file
    assert parts.installed("fake.gguf")
    del sources["fake-model-part1"]
    assert not parts.installed("fake.gguf")
    with pytest.raises(ImportError, match="fake-model-part1"):
        parts.assemble("fake.gguf", progress=False)


def test_the_manifest_adds_up_and_names_the_pinned_packages() -> None:
    pinned = Path("requirements-offline.txt").read_text().split()
    for spec in parts.manifest().values():
        assert sum(p.size for p in spec.parts) == spec.size
        for part in spec.parts:
            assert f"{part.package}=={spec.version}" in pinned


@pytest.mark.parametrize("name", ["qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
def test_the_shipped_qwen_files_are_found_when_their_parts_are_installed(name: str) -> None:
    info = registry.resolve(name)
    if not registry.gguf_available(info):
        pytest.skip(f"the part packages of {name} are not installed (make setup installs them)")
    path = registry.gguf_path(info)
    spec = parts.manifest()[path.name]
    assert path.stat().st_size == spec.size
    with open(path, "rb") as f:
        assert f.read(4) == b"GGUF"
