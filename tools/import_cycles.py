"""Find import cycles among the project's own modules; exit 1 when there is one.

    python -m tools.import_cycles            # rrdemo/, leaderboard/, ui/, app.py, bench/, tools/
    python -m tools.import_cycles --edges    # also print every import edge

Reads the source with `ast` (nothing is imported), so every import statement counts, wherever it
stands: one inside a function only hides a cycle until the function runs, and one under
`if TYPE_CHECKING:` is a loop the type checker walks and a later runtime import closes (the
modules still depend on each other; the layout should not). An edge goes to the
module named (`from rrdemo.backends import pool` names `rrdemo.backends.pool`); the packages it
passes through are not counted, since Python finishes a package's `__init__` before its
submodules import one another. Each cycle is printed as one path through its modules.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("rrdemo", "leaderboard", "ui", "app.py", "bench", "tools")


def module_files(root: Path = ROOT, sources: Iterable[str] = SOURCES) -> dict[str, Path]:
    """Module name -> file, for every .py file under `sources` (relative to `root`)."""
    found: dict[str, Path] = {}
    for source in sources:
        path = root / source
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        for file in files:
            parts = list(file.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = file
    return found


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement in `tree`, at any depth (functions, `if TYPE_CHECKING:` blocks)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def imported_names(module: str, file: Path) -> set[str]:
    """The dotted names module `module` (in `file`) imports: `import a.b` gives a.b, and
    `from a import b` gives a.b (b may be a submodule or a name defined in a)."""
    is_package = file.name == "__init__.py"
    names: set[str] = set()
    for node in _import_nodes(ast.parse(file.read_text(encoding="utf-8"), str(file))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:  # relative: from the module's package, `level` steps up
            package = module.split(".") if is_package else module.split(".")[:-1]
            package = package[: len(package) - (node.level - 1)]
            base = ".".join([*package, base] if base else package)
        names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (each name's longest prefix that is a module:
    `from a import b` reaches a.b when b is a submodule, else a)."""
    graph: dict[str, set[str]] = {}
    for module, file in modules.items():
        targets = set()
        for name in imported_names(module, file):
            parts = name.split(".")
            while parts and ".".join(parts) not in modules:
                parts.pop()
            if parts and ".".join(parts) != module:
                targets.add(".".join(parts))
        graph[module] = targets
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph) + 100))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def cycle_path(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """One cycle through the first module of `component`, as a list ending where it starts."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    queue = [start]
    while queue:  # breadth first: the shortest way back to `start` inside the component
        node = queue.pop(0)
        for target in sorted(graph[node] & members):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    return [*component, start]


def find_cycles(root: Path = ROOT, sources: Iterable[str] = SOURCES) -> list[list[str]]:
    """Every import cycle among the modules under `sources`, one path per cycle."""
    graph = import_graph(module_files(root, sources))
    return [cycle_path(graph, component) for component in strongly_connected(graph)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="print every import edge too")
    args = parser.parse_args(argv)
    if args.edges:
        graph = import_graph(module_files())
        for module in sorted(graph):
            for target in sorted(graph[module]):
                print(f"{module} -> {target}")
    cycles = find_cycles()
    for cycle in cycles:
        print("cycle: " + " -> ".join(cycle))
    print(f"{len(cycles)} import cycle(s) in {', '.join(SOURCES)}")
    return 1 if cycles else 0


if __name__ == "__main__":
    raise SystemExit(main())
