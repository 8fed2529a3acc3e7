"""A pytest plugin that writes, per test, the pytest process's peak and held resident memory.

    .venv/bin/python -m pytest -p tests.support.memory_report --memory-report=mem.tsv ...

Before each test the kernel's high-water mark is reset (``/proc/self/clear_refs``, value 5), so the
peak read after it (``VmHWM``) is that test's own, setup and teardown included; ``VmRSS`` is what
the process still holds after it. Then what its live child processes hold, and the largest peak of
any child that has ended so far (it grows at the test whose child set it). Columns: test, held
before, peak, held after, children after, ended children's peak (MB). Module-scoped teardowns land
in the next test's row. Linux only; elsewhere the option writes nothing.

The run's peaks close the terminal summary: pytest's highest per-test peak (and its test) and the
ended children's. Their larger is the suite's peak: resetting the mark lowers the figure the
kernel reports at exit, so GNU time's "Maximum resident set size" of a run with this report on can
read lower than pytest's true peak (it shows only the peak since the last reset, or a child's).
"""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

_STATUS = Path("/proc/self/status")
_CLEAR = Path("/proc/self/clear_refs")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--memory-report",
        default=None,
        metavar="FILE",
        help="write each test's peak and held resident memory (MB) to FILE (TSV)",
    )


def _status_mb(*keys: str) -> dict[str, float]:
    out = {}
    for line in _STATUS.read_text().splitlines():
        name, _, value = line.partition(":")
        if name in keys:
            out[name] = int(value.split()[0]) / 1024
    return out


def _reset_peak() -> bool:
    try:
        _CLEAR.write_text("5")
    except OSError:
        return False
    return True


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    path = item.config.getoption("--memory-report")
    if not path or not _STATUS.exists():
        yield
        return
    before = _status_mb("VmRSS")["VmRSS"]
    reset = _reset_peak()
    yield
    after = _status_mb("VmRSS", "VmHWM")
    peak = after["VmHWM"] if reset else float("nan")
    with open(path, "a", encoding="utf-8") as f:
        f.write(
            f"{item.nodeid}\t{before:.0f}\t{peak:.0f}\t{after['VmRSS']:.0f}\t{_children_mb():.0f}"
            f"\t{_ended_children_peak_mb():.0f}\n"
        )
    if reset and peak > _HIGHEST["peak"]:
        _HIGHEST.update(peak=peak, test=item.nodeid)


_HIGHEST: dict = {"peak": 0.0, "test": None}  # pytest's highest per-test peak so far (MB)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    path = config.getoption("--memory-report")
    if not path or _HIGHEST["test"] is None:
        return
    terminalreporter.write_line(
        f"memory report ({path}): pytest's peak {_HIGHEST['peak']:.0f} MB in "
        f"{_HIGHEST['test']}; ended children's peak {_ended_children_peak_mb():.0f} MB"
    )


def _ended_children_peak_mb() -> float:
    """The largest peak of any child process that has ended and been waited for so far in the run
    (the kernel's RUSAGE_CHILDREN; GNU time reports the same figure for the whole suite)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _children_mb() -> float:
    """Resident memory of the processes pytest started that are still alive after the test."""
    try:
        import psutil
    except ImportError:
        return float("nan")
    total = 0
    for child in psutil.Process().children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.Error:
            continue
    return total / 2**20
