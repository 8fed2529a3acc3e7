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


def _package(root: Path, modules: dict[str, str]) -> None:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in modules.items():
        (package / f"{name}.py").write_text(text)


def test_the_checker_sees_a_cycle_held_together_by_a_function_level_import(tmp_path) -> None:
    _package(
        tmp_path,
        {
            "a": "from pkg.b import g\n\ndef f():\n    return g()\n",
            "b": "def g():\n    from pkg import a\n\n    return a\n",
            "d": "from . import b\n",
        },
    )
    assert import_cycles.find_cycles(tmp_path, ("pkg",)) == [["pkg.a", "pkg.b", "pkg.a"]]
    graph = import_cycles.import_graph(import_cycles.module_files(tmp_path, ("pkg",)))
    assert graph["pkg.d"] == {"pkg.b"}  # relative import


def test_the_checker_sees_a_cycle_held_together_by_a_type_checking_import(tmp_path) -> None:
    """The shape the run log once had: a planner imports a split function-level, the split's
    module imports the log writer, and the writer names the plan only for the type checker."""
    _package(
        tmp_path,
        {
            "spec": "class Plan:\n    pass\n\ndef held_out():\n    from pkg.split import split\n",
            "split": "from pkg.writer import Writer\n\ndef split():\n    return Writer\n",
            "writer": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
            "    from pkg.spec import Plan\n\nclass Writer:\n    plan: 'Plan'\n",
            "other": "import typing\nif typing.TYPE_CHECKING:\n    import pkg.writer\n",
        },
    )
    assert import_cycles.find_cycles(tmp_path, ("pkg",)) == [
        ["pkg.spec", "pkg.split", "pkg.writer", "pkg.spec"]
    ]
    graph = import_cycles.import_graph(import_cycles.module_files(tmp_path, ("pkg",)))
    assert graph["pkg.writer"] == {"pkg.spec"} and graph["pkg.other"] == {"pkg.writer"}


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
