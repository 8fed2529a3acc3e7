"""The memory estimate against the memory a run really takes (docs/security.md's table).

Each case runs in a fresh process on the transformers engine (CPU, float32): the resident size
is read after the imports, after the model loads, at its peak while the run goes (a thread reads
/proc every 10 ms) and after the run. The estimate made before anything loads
(`rrdemo.memory.check_memory`) and the engine's own check, made once the prompts are counted in
the model's tokens (`TransformersBackend._reserve_memory`), are printed beside the growth.

    .venv/bin/python -m bench.memory_estimate             # every case, a markdown table
    .venv/bin/python -m bench.memory_estimate --reuse     # the estimates again, runs kept
    .venv/bin/python -m bench.memory_estimate --case cjk  # one case, one JSON line
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "memory_estimate.json"
EXTENSION_B = "".join(chr(0x20000 + i % 4000) for i in range(20_000))  # 4 UTF-8 bytes each

# name -> (what it is, run settings, question: (task, index) or a custom text)
CASES: dict[str, tuple[str, dict, tuple | str]] = {
    "small": ("N 3, c 1, M = N, K 8, L 32, logic3", dict(n=3, c=1, k=8, m=0, max_tokens=32), ("logic3", 0)),
    "arena": ("N 5, c 2, M = N, K 4, L 64, logic3", dict(n=5, c=2, k=4, m=0, max_tokens=64), ("logic3", 0)),
    "gsm8k": ("N 5, c 2, M 5, K 16, L 128, gsm8k", dict(n=5, c=2, k=16, m=5, max_tokens=128), ("gsm8k", 0)),
    "cjk": ("probe: 1,000 CJK Ext-B characters, N 4, M = N, L 8", dict(n=4, c=0, k=4, m=0, max_tokens=8), EXTENSION_B[:1000]),
    "cjk2000": ("probe: 2,000 CJK Ext-B characters, N = M = 1, L 8", dict(n=1, c=0, k=4, m=1, max_tokens=8), EXTENSION_B[:2000]),
}  # fmt: skip


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def case(name: str):
    """The case's config, question and task."""
    from rrdemo.config import AgentSpec, RunConfig
    from rrdemo.tasks import get_task, load_questions

    _, settings, source = CASES[name]
    settings = dict(settings)
    n, c = settings.pop("n"), settings.pop("c")
    agents = tuple(AgentSpec("smollm2", corrupted=i < c) for i in range(n))
    settings["m"] = settings["m"] or None  # 0: M = N, as the Arena reads it
    config = RunConfig(agents=agents, strength="strong" if c else "none", **settings)
    if isinstance(source, str):
        task = get_task("custom")
        question = task.question(source)
    else:
        task = get_task(source[0])
        question = load_questions(source[0])[source[1]]
    return config, question, task


def estimate(name: str) -> int:
    """The estimate made before anything loads, as the Arena makes it (no model loaded)."""
    from rrdemo.backends.pool import ModelPool
    from rrdemo.memory import check_memory

    config, _, _ = case(name)
    pool = ModelPool(preferred_backend="transformers")
    return check_memory([config], pool, public=False, budget=10**15).total


def measure(name: str) -> dict:
    """One case in this process: the engine's estimate and the resident sizes, in bytes."""
    import gc

    import torch  # noqa: F401  (imported before the first reading)

    from rrdemo.backends.pool import ModelPool
    from rrdemo.protocols import run_question

    config, question, task = case(name)
    pool = ModelPool(preferred_backend="transformers")
    gc.collect()
    start = _rss()
    backend = pool.get("smollm2")
    checked: list[int] = []
    check = backend._reserve_memory

    def recording(ids, requests):  # the engine's estimate of each batch
        checked.append(backend.memory_need(ids, requests)[0])
        return check(ids, requests)

    backend._reserve_memory = recording
    gc.collect()
    loaded = _rss()
    peak = [loaded]
    running = [True]

    def sample() -> None:
        while running[0]:
            peak[0] = max(peak[0], _rss())
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    began = time.monotonic()
    for _ in run_question(config, question, task, pool, target=None):
        pass
    seconds = time.monotonic() - began
    running[0] = False
    sampler.join()
    gc.collect()
    return {
        "case": name,
        "engine": max(checked, default=0),
        "start": start,
        "loaded": loaded,
        "peak": peak[0],
        "after": _rss(),
        "seconds": round(seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES))
    parser.add_argument(
        "--reuse", action="store_true", help=f"read the cases measured already from {RESULTS.name}"
    )
    args = parser.parse_args()
    if args.case:
        print(json.dumps(measure(args.case)))
        return
    print("| case | estimate before loading | engine's check (prompt counted) | measured growth "
          "(load + run peak) | estimate / measured | engine / measured |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    measured = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for name, (what, _, _) in CASES.items():
        if args.reuse and name in measured:
            row = measured[name]
        else:  # one thread: two llama.cpp jobs may hold the cores (the memory does not change)
            env = {**os.environ, "OMP_NUM_THREADS": "1"}
            out = subprocess.run(
                [sys.executable, "-m", "bench.memory_estimate", "--case", name],
                cwd=ROOT, capture_output=True, text=True, check=True, env=env,
            )  # fmt: skip
            row = measured[name] = json.loads(out.stdout.strip().splitlines()[-1])
            RESULTS.write_text(json.dumps(measured, indent=1) + "\n")
        grown, before = row["peak"] - row["start"], estimate(name)
        print(
            f"| {what} | {before / 1e9:.2f} GB | {row['engine'] / 1e9:.2f} GB | "
            f"{grown / 1e9:.2f} GB | {before / grown:.1f} | {row['engine'] / grown:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
