"""docs/architecture.md against the tree: every module it names exists, every package is named,
and files and functions stay a size a person reads in one sitting."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
TOPS = ("rrdemo", "ui", "leaderboard", "bench", "tools")
MAX_LINES, MAX_FUNCTION = 500, 80
# Still past the sizes, each waiting for its split (none now); an entry no longer past them is
# harmless.
LONG_FILES: set[str] = set()
LONG_FUNCTIONS: set[str] = set()


def _sources() -> list[str]:
    """The project's Python files (applied migrations left out), relative to the root."""
    files = ["app.py"] + [
        p.relative_to(ROOT).as_posix() for top in TOPS for p in sorted((ROOT / top).rglob("*.py"))
    ]
    return [f for f in files if "/migrations/versions/" not in f]


def _exists(path: str, sources: list[str]) -> bool:
    """Whether a path the page names is there: from the root (`rrdemo/config.py`), or, as the
    page writes a module beside its package, the end of a source's path (`runs/record.py`)."""
    return (ROOT / path).exists() or any(s.endswith("/" + path) for s in sources)


def _named(text: str) -> set[str]:
    """The file paths the page names in backticks, less its patterns (`tests/rrdemo/test_X.py`)."""
    paths = set(re.findall(r"`([\w./-]+\.(?:py|md|sh))`", text))
    return {p for p in paths if not re.search(r"(^|/|_)X\.py$", p)}


def _names(module: Path) -> set[str]:
    """The names a module defines or imports at its top level."""
    names: set[str] = set()
    for node in ast.parse(module.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom | ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _dotted_exists(dotted: str) -> bool:
    """Whether `rrdemo.runs.log.LOG_VERSION` names a module and, after it, one of its names."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = ROOT.joinpath(*parts[:cut])
        module = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if module.is_file():
            rest = parts[cut:]
            return not rest or rest[0] in _names(module)
    return False


def test_every_module_the_page_names_exists_and_every_package_is_named() -> None:
    text, sources = DOC.read_text(), _sources()
    paths, tests = (
        _named(text),
        [p.relative_to(ROOT).as_posix() for p in ROOT.glob("tests/**/*.py")],
    )
    assert len(paths) > 50  # the homes table names the modules
    assert sorted(p for p in paths if not _exists(p, sources + tests)) == []
    dotted = set(re.findall(rf"`((?:{'|'.join(TOPS)})(?:\.\w+)+)", text))
    assert sorted(d for d in dotted if not _dotted_exists(d)) == []
    assert not _exists("runs/nothing.py", sources) and not _dotted_exists("rrdemo.runs.nothing")
    packages = sorted(Path(s).parent.as_posix() for s in sources if s.endswith("/__init__.py"))
    assert "rrdemo/report/paper" in packages
    assert [p for p in packages if f"{p}/" not in text] == []


def _past_the_sizes(source: str, text: str) -> list[str]:
    """What of one file is past the sizes: the file itself (over `MAX_LINES` lines), and each
    function or method over `MAX_FUNCTION` lines from its `def` to its last line."""
    found = (
        [f"{source} ({len(text.splitlines())} lines)"] if len(text.splitlines()) > MAX_LINES else []
    )
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            size = node.end_lineno - node.lineno + 1
            if size > MAX_FUNCTION:
                found.append(f"{source}:{node.name} ({size} lines)")
    return found


def test_the_size_check_finds_a_file_of_501_lines_and_a_function_of_81() -> None:
    def function(lines: int) -> str:  # a def line, then lines - 1 of body
        return "def f():\n" + "    x = 1\n" * (lines - 1)

    assert _past_the_sizes("a.py", function(80)) == []
    assert _past_the_sizes("a.py", function(81)) == ["a.py:f (81 lines)"]
    nested = "class C:\n" + "".join("    " + line + "\n" for line in function(81).splitlines())
    assert _past_the_sizes("a.py", nested) == ["a.py:f (81 lines)"]
    assert _past_the_sizes("a.py", "x = 1\n" * 500) == []
    assert _past_the_sizes("a.py", "x = 1\n" * 501) == ["a.py (501 lines)"]


def test_files_and_functions_stay_a_size_read_in_one_sitting() -> None:
    past = [
        found
        for source in _sources()
        for found in _past_the_sizes(source, (ROOT / source).read_text())
        if found.split(" (")[0] not in LONG_FILES | LONG_FUNCTIONS
    ]
    assert past == []
