"""A venv holding exactly what `pip install -r requirements.txt` installs, built without a network.

A Space installs requirements.txt and nothing else. Re-installing it in a test would need the
package index and minutes of time, so this builds the same environment from the project's own
venv (which was installed from the same pinned lines): it walks the requirements and their
declared dependencies (`Requires-Dist`, markers evaluated, no extras) through the installed
distributions' metadata, and links only those distributions' files into a fresh venv. The
offline extras (requirements-offline.txt) and everything else are absent, both for `import` and
for `importlib.metadata`, exactly as on a Space.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def requirement_names(path: Path) -> list[str]:
    """Distribution names of the requirement lines in `path` (comments and options skipped)."""
    names = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.append(Requirement(line).name)
    return names


def closure(names: list[str]) -> dict[str, importlib.metadata.Distribution]:
    """The installed distributions `names` need, their dependencies included (no extras)."""
    found: dict[str, importlib.metadata.Distribution] = {}
    todo = list(names)
    while todo:
        key = canonicalize_name(todo.pop())
        if key in found:
            continue
        try:
            dist = importlib.metadata.distribution(key)
        except importlib.metadata.PackageNotFoundError:
            continue  # a platform-only dependency (its marker did not apply when installed)
        found[key] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return found


def _top_level(dist: importlib.metadata.Distribution) -> set[str]:
    """The entries a distribution puts directly in site-packages (packages, modules, dist-info)."""
    tops = set()
    for file in dist.files or []:
        first = file.parts[0]
        if first not in ("..", "__pycache__") and not re.match(r"^\.\.", str(file)):
            tops.add(first)
    return tops


def build(target: Path, requirements: Path) -> tuple[Path, set[str]]:
    """Create the venv at `target`; returns its python and the distributions it holds."""
    subprocess.run(
        [sys._base_executable, "-m", "venv", "--without-pip", "--symlinks", str(target)],
        check=True,
    )
    source = Path(sysconfig.get_paths()["purelib"])
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = target / "lib" / version / "site-packages"
    dists = closure(requirement_names(requirements))
    for dist in dists.values():
        for name in _top_level(dist):
            if (source / name).exists() and not (site / name).exists():
                (site / name).symlink_to(source / name)
    return target / "bin" / "python", set(dists)
