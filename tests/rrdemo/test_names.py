"""Names that explain themselves: no class name is defined twice in the library."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

LIBRARY = Path(__file__).resolve().parents[2] / "rrdemo"


def class_homes(root: Path) -> dict[str, list[str]]:
    """Each class name defined under `root` (at any depth of a module) and where: 'path:line'."""
    homes: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                homes[node.name].append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return homes


def test_no_class_name_is_defined_twice_in_the_library():
    twice = {name: where for name, where in class_homes(LIBRARY).items() if len(where) > 1}
    assert not twice, f"class names defined more than once: {twice}"


def test_the_check_sees_a_name_defined_in_two_modules(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("class Row:\n    pass\n")
    (package / "sub" / "b.py").write_text("def f():\n    class Row:\n        pass\n")
    assert class_homes(package)["Row"] == ["pkg/a.py:1", "pkg/sub/b.py:2"]
