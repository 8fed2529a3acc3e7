"""The suite's shards: whole modules, dealt heaviest first, every test in exactly one shard."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.run_shards import shard_args
from tests.support.shards import assign, parse_shard, select

ROOT = Path(__file__).resolve().parent.parent


def test_modules_are_dealt_heaviest_first_to_the_lightest_shard() -> None:
    guessed = {"a.py": 1.0, "b.py": 1.0, "c.py": 1.0, "d.py": 1.0}
    seconds = {"a.py": 100.0, "b.py": 60.0, "c.py": 50.0, "d.py": 5.0}
    assert assign(guessed, seconds, 2) == {"a.py": 0, "b.py": 1, "c.py": 1, "d.py": 0}
    # unmeasured modules weigh what their marks guess
    assert assign({"x.py": 30, "y.py": 10, "z.py": 15}, {}, 2) == {"x.py": 0, "z.py": 1, "y.py": 1}


def test_an_unmeasured_module_of_slow_tests_outweighs_one_of_many_quick_ones() -> None:
    tests = [(f"tests/quick.py::t{i}", False) for i in range(15)]
    tests += [("tests/slow.py::t", True), ("tests/other.py::t", False)]
    in_first = select(tests, 0, 2, {})
    # slow.py (10 s) goes first to shard 0; quick.py (7.5 s), then other.py, to shard 1
    assert in_first == [False] * 15 + [True, False]


def test_every_test_runs_in_exactly_one_shard_and_a_module_stays_whole() -> None:
    ids = [f"tests/m{m}.py::test_{t}" for m in range(7) for t in range(m + 1)]
    chosen = [select([(i, False) for i in ids], index, 3, {}) for index in range(3)]
    assert all(sum(flags) == 1 for flags in zip(*chosen, strict=True))
    for flags in chosen:
        modules_in = {i.split("::")[0] for i, f in zip(ids, flags, strict=True) if f}
        modules_out = {i.split("::")[0] for i, f in zip(ids, flags, strict=True) if not f}
        assert not modules_in & modules_out


@pytest.mark.parametrize("text", ["2", "a/2", "2/2", "-1/2", "0/0"])
def test_a_bad_shard_says_what_is_allowed(text) -> None:
    with pytest.raises(ValueError, match="RRDEMO_TEST_SHARD"):
        parse_shard(text)


def test_each_shard_writes_its_own_junit_report() -> None:
    assert shard_args(["-q", "--junitxml=out/r.xml"], 1) == ["-q", "--junitxml=out/r.shard1.xml"]


@pytest.mark.slow
def test_two_real_shards_collect_the_suite_between_them_once(tmp_path) -> None:
    """`run_shards` itself: two pytest processes, each its own modules, the union the whole."""
    targets = ["tests/test_shards.py", "tests/rrdemo/test_voting.py", "tests/test_results_table.py"]

    def collected(extra_env: dict) -> list[str]:
        env = {k: v for k, v in os.environ.items() if k != "RRDEMO_TEST_SHARD"} | extra_env
        out = subprocess.run(
            [sys.executable, "-m", "tests.support.run_shards", "--collect-only", "-q", *targets],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        ).stdout
        return sorted(line for line in out.splitlines() if "::" in line)

    both = collected({"RRDEMO_TEST_SHARDS": "2"})
    alone = collected({"RRDEMO_TEST_SHARDS": "1"})
    assert both == alone and len(alone) > 10  # a test in both shards would be listed twice
