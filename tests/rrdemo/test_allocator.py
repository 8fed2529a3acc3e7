"""The malloc arena limit a long-lived server sets (rrdemo.allocator)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rrdemo.allocator import limit_arenas

LINUX = sys.platform.startswith("linux")
ROOT = Path(__file__).resolve().parents[2]  # the child imports rrdemo from the checkout


@pytest.mark.skipif(not LINUX, reason="glibc only")
def test_the_limit_is_set_unless_glibc_was_told_one() -> None:
    # in a child, so this test run's own allocator keeps its settings
    code = "from rrdemo.allocator import limit_arenas; print(limit_arenas())"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    ran = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert ran.stdout.strip() == "True", ran.stderr
    told = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "MALLOC_ARENA_MAX": "4"},
        capture_output=True,
        text=True,
    )
    assert told.stdout.strip() == "False", told.stderr


@pytest.mark.skipif(not LINUX, reason="glibc only")
def test_a_count_that_is_not_a_whole_number_takes_the_default() -> None:
    code = "from rrdemo.allocator import limit_arenas; print(limit_arenas())"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "RRDEMO_MALLOC_ARENAS": "many"}
    ran = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert ran.stdout.strip() == "True", ran.stderr


def test_nothing_is_set_off_linux(monkeypatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    assert limit_arenas() is False
