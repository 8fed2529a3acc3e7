"""Which test modules a shard of the suite runs (`RRDEMO_TEST_SHARD=i/n`, set by `run_shards`).

Whole modules go to one shard, so a module's served app and its models start once. Modules are
dealt out heaviest first to the shard with the least work so far; a module's weight is its
measured seconds (`module_seconds.json`, written from a run's junit report by
`python -m tests.support.module_seconds`) or, for a module not measured yet, a guess from its
marks (`UNMEASURED_SECONDS`: a slow or browser test takes seconds, any other a fraction of one).
The assignment depends only on that file and on the collected names, so a shard runs the same
tests in the same order every time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

SHARD_ENV = "RRDEMO_TEST_SHARD"
SECONDS_FILE = Path(__file__).with_name("module_seconds.json")
UNMEASURED_SECONDS = {"slow": 10.0, "fast": 0.5}  # per test, for modules not in the file


def parse_shard(text: str) -> tuple[int, int]:
    """ "0/2" -> (0, 2); a clear error for anything else."""
    try:
        index, count = (int(part) for part in text.split("/"))
    except ValueError:
        raise ValueError(
            f"{SHARD_ENV} must look like 0/2 (shard index / shard count), not {text!r}"
        ) from None
    if not 0 <= index < count:
        raise ValueError(f"{SHARD_ENV}={text}: the index must be 0 to {count - 1}")
    return index, count


def measured_seconds(path: Path = SECONDS_FILE) -> dict[str, float]:
    return json.loads(path.read_text()) if path.exists() else {}


def assign(
    guessed: Mapping[str, float], seconds: Mapping[str, float], count: int
) -> dict[str, int]:
    """The shard of each module (`guessed`: its seconds when `seconds` has none): heaviest
    first, each to the shard with the least weight so far (ties to the lower shard; modules of
    equal weight in name order)."""
    weight = {m: float(seconds.get(m, guess)) for m, guess in guessed.items()}
    loads = [0.0] * count
    shard_of = {}
    for module in sorted(weight, key=lambda m: (-weight[m], m)):
        shard = min(range(count), key=lambda s: (loads[s], s))
        shard_of[module] = shard
        loads[shard] += weight[module]
    return shard_of


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def select(
    tests: Iterable[tuple[str, bool]], index: int, count: int, seconds: Mapping[str, float]
) -> list[bool]:
    """For each collected test (its node id, whether it is marked slow or browser), whether
    shard `index` of `count` runs it."""
    tests = list(tests)
    guessed: dict[str, float] = {}
    for nodeid, slow in tests:
        per_test = UNMEASURED_SECONDS["slow" if slow else "fast"]
        guessed[module_of(nodeid)] = guessed.get(module_of(nodeid), 0.0) + per_test
    shard_of = assign(guessed, seconds, count)
    nodeids = [nodeid for nodeid, _ in tests]
    return [shard_of[module_of(nodeid)] == index for nodeid in nodeids]
