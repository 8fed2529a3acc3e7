"""tests/support/memory_report.py, the per-test memory report behind docs/development.md's
"Memory": a test that holds 300 MB for a moment shows that peak in its own row, hands it back,
and the terminal summary names it as the run's highest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/clear_refs").exists(), reason="the report reads Linux's /proc"
)

_INNER = """
def test_small():
    bytearray(1 << 20)

def test_holds_300_mb_for_a_moment():
    block = bytearray(300 << 20)
    block[:: 4096] = b"x" * len(block[:: 4096])  # touch every page, so it is resident
    del block

def test_small_again():
    pass
"""


def test_each_row_holds_its_own_tests_peak_and_the_summary_names_the_highest(tmp_path) -> None:
    (tmp_path / "test_inner.py").write_text(_INNER)
    report = tmp_path / "mem.tsv"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.support.memory_report",
         f"--memory-report={report}", "-p", "no:cacheprovider", str(tmp_path / "test_inner.py")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {}
    for line in report.read_text().splitlines():
        test, before, peak, after, _children, _ended = line.split("\t")
        rows[test.rsplit("::", 1)[1]] = (float(before), float(peak), float(after))
    assert list(rows) == ["test_small", "test_holds_300_mb_for_a_moment", "test_small_again"]
    before, peak, after = rows["test_holds_300_mb_for_a_moment"]
    assert peak - before >= 250 and peak - after >= 250  # its own peak, then given back
    later_before, later_peak, _ = rows["test_small_again"]
    assert later_peak - later_before < 100  # the mark was reset: the next row is not 300 MB up
    assert "pytest's peak" in done.stdout and "test_holds_300_mb_for_a_moment" in done.stdout
