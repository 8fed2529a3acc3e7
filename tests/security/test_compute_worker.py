"""The worker process itself: what breaks its limits is stopped by the operating system or at
its deadline, says why in one sentence, and the next call gets a fresh worker. Each test owns
its pool (tiny limits, nothing preloaded)."""

from __future__ import annotations

import math
import threading
import time

import pytest

from rrdemo.worker import Refused, WorkerPool, WorkLimits


def _spin(seconds: float) -> int:
    """Busy CPU for `seconds` of wall time (a stand-in for sympy evaluating a power)."""
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        n += 1
    return n


def _allocate(size: int) -> int:
    return len(bytearray(size))


@pytest.fixture
def pool():
    made = WorkerPool((), WorkLimits(cpu_seconds=1, wall_seconds=3.0, memory_bytes=1 << 30))
    yield made
    made.close()


def test_a_call_past_its_cpu_limit_is_stopped_by_the_system() -> None:
    """RLIMIT_CPU (1 s) stops it, not the wall deadline: the deadline is a minute here, so a
    busy machine (where a CPU second takes several seconds of wall time) gets the same answer."""
    pool = WorkerPool((), WorkLimits(cpu_seconds=1, wall_seconds=60.0, memory_bytes=1 << 30))
    try:
        started = time.monotonic()
        with pytest.raises(Refused, match="past its CPU or memory limit"):
            pool.call(_spin, 120.0)
        assert time.monotonic() - started < 60.0  # the system stopped it before the deadline
        assert pool.killed == 1 and pool.call(math.factorial, 5) == 120  # a fresh worker answers
    finally:
        pool.close()


def test_a_call_that_sleeps_past_its_deadline_is_killed(pool) -> None:
    started = time.monotonic()
    with pytest.raises(Refused, match="took too long, so it was stopped"):
        pool.call(time.sleep, 60)  # no CPU spent: only the wall deadline stops it
    assert time.monotonic() - started < 3.0 + 5
    assert pool.killed == 1 and pool.call(len, "abc") == 3


def test_a_call_past_its_memory_limit_fails_and_the_worker_goes_on(pool) -> None:
    with pytest.raises(Refused, match="needed more memory than allowed"):
        pool.call(_allocate, 4 << 30)
    assert pool.call(_allocate, 1 << 20) == 1 << 20
    assert pool.killed == 0


def test_a_failing_call_says_what_failed_without_a_traceback(pool) -> None:
    with pytest.raises(Refused) as refused:
        pool.call(math.factorial, -1)
    assert str(refused.value) == "the computation failed (ValueError)"


def test_a_call_with_no_free_worker_is_refused_after_its_wait() -> None:
    limits = WorkLimits(cpu_seconds=10, wall_seconds=20.0, wait_seconds=0.5)
    busy = WorkerPool((), limits, size=1)
    try:
        busy.call(len, "")  # started
        holder = threading.Thread(target=busy.call, args=(time.sleep, 2))
        holder.start()
        time.sleep(0.3)
        with pytest.raises(Refused, match="busy with other visitors. computations"):
            busy.call(len, "x")
        holder.join()
        assert busy.call(len, "xy") == 2
    finally:
        busy.close()
