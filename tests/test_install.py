"""The project installs as `make setup` installs it (editable, no build isolation, nothing
downloaded), and then `rrdemo` and `python -m rrdemo` run from any folder.

The install goes into a fresh venv that sees the project venv's packages through a `.pth` line,
so it needs neither the network nor a reinstall of the shared venv.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with this checkout installed as the Makefile installs it; returns its bin folder."""
    target = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = target / "lib" / version / "site-packages"
    (site / "project_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [sys.executable, "-m", "pip", "--python", str(target / "bin" / "python")]
    subprocess.run(
        [*pip, "install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-e", str(ROOT)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target / "bin"


def _run(
    command: list[str], cwd: Path, env: dict | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=120, env=env, check=False
    )


def test_rrdemo_runs_from_another_folder(venv: Path, tmp_path: Path) -> None:
    clean = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no PYTHONPATH, no project cwd
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
