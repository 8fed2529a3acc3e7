"""scripts/build_llama_cpp_wheel.sh's choice of build: the portable wheel by default, one compiled
for this CPU with LLAMA_CPP_NATIVE=1, kept apart so neither is handed back for the other. Run with
--build-only on a wheel folder that already holds both (a file named as pip names the wheel), so
nothing is compiled or installed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "build_llama_cpp_wheel.sh"
WHEEL = "llama_cpp_python-0.3.36-py3-none-linux_x86_64.whl"


def _build_only(wheels: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(SCRIPT), "--build-only"],
        env={**os.environ, "WHEEL_DIR": str(wheels), "LLAMA_CPP_VERSION": "0.3.36", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _wheels(tmp_path: Path) -> Path:
    wheels = tmp_path / "wheels"
    (wheels / "native").mkdir(parents=True)
    (wheels / WHEEL).write_bytes(b"portable")
    (wheels / "native" / WHEEL).write_bytes(b"native")
    return wheels


def test_the_portable_wheel_is_the_default_and_the_native_one_lives_apart(tmp_path: Path) -> None:
    wheels = _wheels(tmp_path)
    portable = _build_only(wheels)
    native = _build_only(wheels, LLAMA_CPP_NATIVE="1")
    assert portable.returncode == native.returncode == 0, portable.stderr + native.stderr
    assert Path(portable.stdout.strip()).read_bytes() == b"portable"
    assert Path(native.stdout.strip()).read_bytes() == b"native"
    assert _build_only(wheels, LLAMA_CPP_NATIVE="0").stdout == portable.stdout


def test_another_native_setting_is_refused_naming_the_allowed_ones(tmp_path: Path) -> None:
    done = _build_only(_wheels(tmp_path), LLAMA_CPP_NATIVE="yes")
    assert done.returncode == 2 and done.stdout == ""
    assert "LLAMA_CPP_NATIVE must be 0 (portable, the default) or 1 (this CPU), got 'yes'" in (
        done.stderr
    )
