"""`make test`: the suite as shards run side by side, one per core.

    python -m tests.support.run_shards [pytest options]

Much of the suite waits on servers, clients and browsers rather than on the CPU, so two pytest
processes on a 2-core machine finish before one does. Each shard's models compute on one thread
(`RRDEMO_LLAMA_THREADS`, and `OMP_NUM_THREADS` for torch): two processes that each spin two
threads on two cores slow each other down. The shards are not pinned to a core: a shard's
browser and server then use the core the other shard leaves idle.
`RRDEMO_TEST_SHARDS` sets the number of shards (default: the cores this process may use, at
most 2; 1 runs plain pytest). Shard 0 writes to the terminal as it goes; the others' output
follows when they end. The exit status is the first failing shard's, else 0. `--junitxml=F`
becomes one report per shard, `F` with `.shard<i>` before its suffix.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.support.shards import SHARD_ENV

SHARDS_ENV = "RRDEMO_TEST_SHARDS"
NO_TESTS = 5  # pytest's status when a shard collected nothing


def shard_count() -> int:
    cores = len(os.sched_getaffinity(0))
    text = os.environ.get(SHARDS_ENV) or str(min(2, cores))
    if not text.isdigit() or int(text) < 1:
        sys.exit(f"{SHARDS_ENV} must be a whole number of shards, 1 or more (not {text!r})")
    return int(text)


def shard_args(args: list[str], index: int) -> list[str]:
    """The pytest options for shard `index`: its own junit report file."""
    out = []
    for arg in args:
        if arg.startswith("--junitxml="):
            path = Path(arg.removeprefix("--junitxml="))
            arg = f"--junitxml={path.with_name(f'{path.stem}.shard{index}{path.suffix}')}"
        out.append(arg)
    return out


def main(args: list[str]) -> int:
    count = shard_count()
    pytest = [sys.executable, "-m", "pytest"]
    if count == 1:  # the whole suite, even when started from inside a shard
        env = {k: v for k, v in os.environ.items() if k != SHARD_ENV}
        return subprocess.call([*pytest, *args], env=env)
    with contextlib.ExitStack() as files:
        procs, logs = [], []
        for index in range(count):
            env = {**os.environ, SHARD_ENV: f"{index}/{count}"}
            env.setdefault("RRDEMO_LLAMA_THREADS", "1")
            env.setdefault("OMP_NUM_THREADS", "1")
            log = None if index == 0 else files.enter_context(tempfile.TemporaryFile("w+"))
            procs.append(
                subprocess.Popen(
                    [*pytest, *shard_args(args, index)],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT if log else None,
                )
            )
            logs.append(log)
        try:
            codes = [proc.wait() for proc in procs]
        finally:  # interrupted: no shard outlives the run
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
        for index, log in enumerate(logs):
            if log is not None:
                log.seek(0)
                print(f"\n===== shard {index} of {count} =====", flush=True)
                sys.stdout.write(log.read())
    failing = [code for code in codes if code not in (0, NO_TESTS)]
    if all(code == NO_TESTS for code in codes):
        return NO_TESTS
    print(f"\nshards: exit status {codes} (shard order)", flush=True)
    return failing[0] if failing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
