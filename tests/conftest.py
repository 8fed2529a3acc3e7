"""Shared fixtures: every test gets its own data dir and database; real models load once per session."""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import sys

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# A llama.cpp model allocates its whole KV context when it loads: 32 sequences of 2048 cells by
# default (1.5 GB for SmolLM2-135M). Tests decode a few tokens on short prompts, so the run (and
# every app or command it starts, which inherit this) allocates a quarter of that.
os.environ.setdefault("RRDEMO_LLAMA_N_CTX", "1024")
os.environ.setdefault("RRDEMO_LLAMA_SEQS", "16")


def pytest_collection_modifyitems(config, items):
    """Under `RRDEMO_TEST_SHARD=i/n` (tests/support/run_shards.py), only shard i's modules run."""
    shard = os.environ.get("RRDEMO_TEST_SHARD")
    if not shard:
        return
    from tests.support.shards import measured_seconds, parse_shard, select

    try:
        index, count = parse_shard(shard)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    marked = [(i.nodeid, any(i.get_closest_marker(m) for m in ("slow", "browser"))) for i in items]
    keep = select(marked, index, count, measured_seconds())
    config.hook.pytest_deselected(
        items=[item for item, k in zip(items, keep, strict=True) if not k]
    )
    items[:] = [item for item, k in zip(items, keep, strict=True) if k]


@pytest.fixture(autouse=True)
def _isolated_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("RRDEMO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("LEADERBOARD_DB_URL", f"sqlite:///{tmp_path / 'leaderboard.db'}")
    # the board seeds the paper's tables only; tests of our committed sweeps point this elsewhere
    monkeypatch.setenv("LEADERBOARD_PROJECT_RUNS", str(tmp_path / "no-project-runs"))


@pytest.fixture(autouse=True)
def _nothing_carried_between_tests():
    """The process-wide state a test can fill starts empty for the next: the Arena's panel
    claims, the memory ledger's reservations and watchdog notes (the models kept loaded stay
    held: they are still in memory), the committed rate table's cache."""
    yield
    owners, ledger, rates = (
        sys.modules.get(m) for m in ("ui.owners", "rrdemo.memory_ledger", "rrdemo.rates")
    )
    if owners is not None:  # a module not imported yet holds nothing
        owners.reset()
    if ledger is not None:
        ledger.forget_runs()
    if rates is not None:
        rates._committed.cache_clear()


@pytest.fixture(autouse=True, scope="module")
def _worker_pools_closed_after_each_module():
    """The bounded-work pools (math answers, model sizes, templates) hold worker processes and
    their counts; each module starts with none (a call starts a fresh worker in about a second,
    so per module rather than per test)."""
    yield
    worker = sys.modules.get("rrdemo.worker")
    if worker is not None:
        worker.reset()


# Models the run's pool keeps loaded at once (least recently used unloaded first): with two, the
# suite stays within its memory budget (docs/development.md, "Memory").
TEST_MAX_MODELS = 2


@pytest.fixture(scope="session")
def real_pool():
    """The offline models, loaded once for the whole session (converted copies come from .cache/)."""
    from rrdemo.backends.pool import ModelPool

    return ModelPool(max_models=TEST_MAX_MODELS)


@pytest.fixture(autouse=True, scope="module")
def _memory_returned_after_each_module():
    """What a test module let go of goes back to the system: a collection (models in reference
    cycles), then glibc's malloc_trim (freed heap pages are otherwise kept by the allocator)."""
    yield
    gc.collect()
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)
