"""The engine's limit beside a study's measured time: how much of llama.cpp's own speed a study
gets (issue 56 item 2).

On this machine and build, with the threads the studies use (`RRDEMO_LLAMA_THREADS`, default:
the cores this process may use), it measures llama.cpp's decode rate at the batch sizes a study
uses (R answers decoded together, `bench.decode_rows`) and its prefill rate (one long prompt, one
new token). Then, for slices of real work, the **ideal time** (their decoded tokens at the decode
rate of their batch size, plus their prefilled tokens at the prefill rate) beside their
**measured time**; efficiency = ideal / measured:

- an experiment slice: the first units of a committed evidence log (MAJ: M answers decoded
  together; RRMaj: M trajectories in lock-step), their logged token counts and wall times;
- a calibration slice: one batch of `--batch` step-by-step answers run now (calibration logs
  record no times), its decoded and prompt tokens, and its wall time.

Where the rest goes: a static batch runs until its longest row ends (rows that ended sit idle),
RR turns of K tokens restart the batch every turn, and the truth meter's reads (logged runs
with `meter: true`) are neither decode nor counted prefill. Writes bench/efficiency.json.

    RRDEMO_LLAMA_THREADS=1 taskset -c 0 python -m bench.efficiency [--units 10] [--batch 16]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).with_name("efficiency.json")
MODEL = "qwen2.5-coder-1.5b"
LOG = ROOT / "assets" / "evidence_aqua" / "log.jsonl"


def ideal_seconds(decode: float, prefill: float, rows: int, rates: dict[int, float],
                  prefill_rate: float) -> float:  # fmt: skip
    """Decoded tokens at the measured rate of the nearest measured batch size, plus prefilled
    tokens at the prefill rate."""
    nearest = min(rates, key=lambda r: (abs(r - rows), -r))
    return decode / rates[nearest] + prefill / prefill_rate


def experiment_slice(log: Path, units: int) -> list[dict]:
    """Per method, the first `units` finished units' decoded and prefilled tokens, wall time
    and batch rows (M), from the log."""
    from rrdemo.runs.log import read_log

    parsed = read_log(log)
    totals: dict[str, dict] = {}
    for done in parsed.finished_units()[:units]:
        m = int(parsed.conditions[done["condition"]]["m_star"])
        for method, compute in done["compute"].items():
            row = totals.setdefault(method, {"method": method, "rows": m, "decode": 0,
                                             "prefill": 0, "measured_s": 0.0, "units": 0})  # fmt: skip
            row["decode"] += compute["decode_tokens"]
            row["prefill"] += compute["prefill_tokens"]
            row["measured_s"] += compute["wall_s"]
            row["units"] += 1
    return list(totals.values())


def prefill_rate(backend) -> float:
    """Tokens a second of one long prompt's prefill (one new token decoded)."""
    from rrdemo.backends.base import Finished, GenerationRequest
    from rrdemo.config import Sampling

    text = " ".join(f"Step {i}: add {i} to the running total and write it down." for i in range(60))
    prompt = backend.render_prompt(text)
    tokens = backend.count_tokens(prompt)
    warm = GenerationRequest(("warm",), backend.render_prompt("Hi"), 1, Sampling(0.0), 0)
    list(backend.generate([warm]))  # the model is loaded and warm before the clock starts
    backend.release()
    start = time.perf_counter()
    list(o for o in backend.generate([GenerationRequest(("prefill",), prompt, 1, Sampling(0.0), 0)])
         if isinstance(o, Finished))  # fmt: skip
    seconds = time.perf_counter() - start
    backend.release()
    return tokens / seconds


def calibration_slice(batch: int) -> dict:
    """One batch of step-by-step arith4 answers run now: tokens and wall time."""
    from rrdemo.backends.pool import ModelPool
    from rrdemo.calibration.log import read_calibration
    from rrdemo.calibration.plan import plan_calibration
    from rrdemo.calibration.runner import run_calibration
    from rrdemo.tasks import get_task
    from rrdemo.tasks.benchmarks import styled_prompt

    plan = plan_calibration({"models": MODEL, "tasks": "arith4", "styles": "step-by-step",
                             "injections": "none", "n": str(batch), "backend": "llamacpp"})  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "slice.jsonl"
        pool = ModelPool()
        start = time.perf_counter()
        run_calibration(plan, out, pool, batch, progress=False)
        seconds = time.perf_counter() - start
        answers = read_calibration(out).answers
        backend = pool.get(MODEL, None, "llamacpp")
        task = get_task("arith4")
        prompt_tokens = sum(
            backend.count_tokens(
                backend.render_prompt(styled_prompt(task.prompt(q), "step-by-step"))
            )
            for q in plan.split["arith4"]
        )
        backend.close()
    lengths = [a["n_tokens"] for a in answers]
    return {"method": "calibration", "rows": batch, "decode": sum(lengths),
            "longest": max(lengths), "prefill": prompt_tokens, "measured_s": seconds,
            "units": len(answers)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from bench.decode_rows import build_name, decode_rows

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=10, help="experiment units of the slice")
    parser.add_argument("--batch", type=int, default=16, help="calibration answers in one batch")
    parser.add_argument("--load", default="", help="what else ran on the machine (said beside)")
    args = parser.parse_args(argv)
    rows = sorted({1, 5, args.batch})
    decode = {r["rows"]: r["tok_s"] for r in decode_rows(rows, 64, MODEL)}
    from rrdemo.backends.pool import ModelPool

    backend = ModelPool().get(MODEL, None, "llamacpp")
    prefill = prefill_rate(backend)
    backend.close()
    slices = experiment_slice(LOG, args.units) + [calibration_slice(args.batch)]
    for row in slices:
        row["ideal_s"] = ideal_seconds(row["decode"], row["prefill"], row["rows"], decode, prefill)
        row["efficiency"] = row["ideal_s"] / row["measured_s"]
    result = {
        "measured": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "build": build_name(),
        "threads": os.environ.get("RRDEMO_LLAMA_THREADS") or len(os.sched_getaffinity(0)),
        "load": args.load or f"load average {os.getloadavg()[0]:.1f} at the end",
        "decode_tok_s": decode,
        "prefill_tok_s": prefill,
        "slices": slices,
    }
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    print(f"decode tok/s by rows: {', '.join(f'{r}: {v:.1f}' for r, v in decode.items())}; "
          f"prefill {prefill:.0f} tok/s ({result['build']}, {result['threads']} thread(s), "
          f"{result['load']})")  # fmt: skip
    print("| slice | rows | units | decoded | prefilled | ideal | measured | efficiency |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in slices:
        print(f"| {r['method']} | {r['rows']} | {r['units']} | {r['decode']:,} | {r['prefill']:,} "
              f"| {r['ideal_s']:.0f} s | {r['measured_s']:.0f} s | {r['efficiency']:.2f} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
