"""The import graph: no cycles (tools/import_cycles.py), and the library imports no front end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools import import_cycles

ROOT = Path(__file__).resolve().parents[2]


def test_the_checker_finds_no_import_cycle() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tools.import_cycles"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_checker_sees_a_cycle_held_together_by_a_function_level_import(tmp_path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import g\n\ndef f():\n    return g()\n")
    (package / "b.py").write_text("def g():\n    from pkg import a\n\n    return a\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n"
    )
    (package / "d.py").write_text("from . import c\n")
    assert import_cycles.find_cycles(tmp_path, ("pkg",)) == [["pkg.a", "pkg.b", "pkg.a"]]
    graph = import_cycles.import_graph(import_cycles.module_files(tmp_path, ("pkg",)))
    assert graph["pkg.c"] == set()  # never runs: TYPE_CHECKING only
    assert graph["pkg.d"] == {"pkg.c"}  # relative import


def test_the_library_imports_neither_the_leaderboard_nor_the_ui_nor_gradio() -> None:
    modules = import_cycles.module_files(ROOT, ("rrdemo",))
    offending = {
        module: sorted(
            name
            for name in import_cycles.imported_names(module, file)
            if name.split(".")[0] in ("leaderboard", "ui", "gradio", "app")
        )
        for module, file in modules.items()
    }
    assert {m: names for m, names in offending.items() if names} == {}
