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
README = Path(__file__).with_name("README.md")
START, END = "<!-- bench:efficiency:start -->", "<!-- bench:efficiency:end -->"
MODEL = "qwen2.5-coder-1.5b"


def ideal_seconds(decode: float, prefill: float, rows: int, rates: dict[int, float],
                  prefill_rate: float) -> float:  # fmt: skip
    """Decoded tokens at the measured rate of the nearest measured batch size, plus prefilled
    tokens at the prefill rate."""
    nearest = min(rates, key=lambda r: (abs(r - rows), -r))
    return decode / rates[nearest] + prefill / prefill_rate


EVIDENCE = {  # the rule 3 arith4 run's settings (assets/evidence_arith4_steps), meter off
    "tasks": "arith4", "models": MODEL, "configs": "3c2t", "strengths": "strong", "k": 16,
    "m_star": 5, "max_tokens": 512, "seed": 0, "temperature": 0.7, "top_p": 0.95,
    "order": "shuffled", "prompt_style": "step-by-step", "eos_policy": "end",
    "backend": "llamacpp",
}  # fmt: skip


def experiment_slice(pool, units: int, workers: int, **settings) -> dict:
    """`units` units of the arith4 evidence settings (with `settings` over them) run now, one
    at a time (`workers` 1) or in a flow: their decoded and prefilled tokens (as logged) and
    wall time."""
    from rrdemo.runs.log import read_log
    from rrdemo.runs.runner import run_plan
    from rrdemo.runs.spec import plan_sweep

    plan = plan_sweep({**EVIDENCE, **settings, "n": units})
    for model in plan.sweep["models"]:
        pool.get(model, None, "llamacpp").release()  # loaded, warm, nothing cached
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "slice.jsonl"
        start = time.perf_counter()
        run_plan(plan, log, pool, progress=False, workers=workers, flow=workers > 1)
        seconds = time.perf_counter() - start
        done = read_log(log).finished_units()
    computes = [c for d in done for c in d["compute"].values()]
    how = "one unit at a time" if workers == 1 else f"flow of {workers} units"
    return {"slice": f"experiment, MAJ + RRMaj ({how})", "rows": 5 * workers,
            "units": len(done), "decode": sum(c["decode_tokens"] for c in computes),
            "prefill": sum(c["prefill_tokens"] for c in computes), "measured_s": seconds}  # fmt: skip


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


def calibration_slice(pool, answers: int, width: int, flow: bool) -> dict:
    """`answers` step-by-step arith4 answers run now, `width` at a time: in static batches (each
    runs until its longest answer ends) or in a flow (a finished row is refilled at once)."""
    from rrdemo.calibration.log import read_calibration
    from rrdemo.calibration.plan import plan_calibration
    from rrdemo.calibration.runner import run_calibration
    from rrdemo.tasks import get_task
    from rrdemo.tasks.benchmarks import styled_prompt

    plan = plan_calibration({"models": MODEL, "tasks": "arith4", "styles": "step-by-step",
                             "injections": "none", "n": str(answers), "backend": "llamacpp"})  # fmt: skip
    backend = pool.get(MODEL, None, "llamacpp")
    backend.release()
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "slice.jsonl"
        start = time.perf_counter()
        run_calibration(plan, out, pool, width, progress=False, flow=flow)
        seconds = time.perf_counter() - start
        done = read_calibration(out).answers
    task = get_task("arith4")
    prompt_tokens = sum(
        backend.count_tokens(backend.render_prompt(styled_prompt(task.prompt(q), "step-by-step")))
        for q in plan.split["arith4"]
    )
    how = "flow" if flow else "static batches"
    return {"slice": f"calibration ({how} of {width})", "rows": width, "units": len(done),
            "decode": sum(a["n_tokens"] for a in done), "prefill": prompt_tokens,
            "measured_s": seconds}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    from bench.decode_rows import build_name, decode_rows
    from bench.report import write_readme
    from rrdemo.backends.pool import ModelPool

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--units", type=int, default=3, help="experiment units of each slice")
    parser.add_argument("--workers", type=int, default=3, help="units in the experiment's flow")
    parser.add_argument("--batch", type=int, default=16, help="calibration rows decoded at once")
    parser.add_argument("--answers", type=int, default=32, help="calibration answers a slice")
    parser.add_argument("--load", default="", help="what else ran on the machine (said beside)")
    args = parser.parse_args(argv)
    rows = sorted({1, 5, args.batch, 5 * args.workers})
    decode = {r["rows"]: r["tok_s"] for r in decode_rows(rows, 64, MODEL)}
    pool = ModelPool()
    prefill = prefill_rate(pool.get(MODEL, None, "llamacpp"))
    slices = [
        experiment_slice(pool, args.units, 1),
        experiment_slice(pool, args.units, args.workers),
        calibration_slice(pool, args.answers, args.batch, flow=False),
        calibration_slice(pool, args.answers, args.batch, flow=True),
    ]
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
    rates = ", ".join(f"{v:.1f} at {r}" for r, v in decode.items())
    text = (
        f"Decode: {rates} rows (tokens/s); prefill {prefill:.0f} tokens/s\n"
        f"({result['build']} build, {result['threads']} thread(s); {result['load']}).\n\n"
        + table(slices)
    )
    write_readme(README, text, START, END, "Efficiency")
    print(text)
    return 0


def table(slices: list[dict]) -> str:
    """The slices as the markdown table bench/README.md carries."""
    lines = ["| slice | rows | units | decoded | prefilled | ideal | measured | efficiency |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    lines += [
        f"| {r['slice']} | {r['rows']} | {r['units']} | {r['decode']:,} | {r['prefill']:,} "
        f"| {r['ideal_s']:.0f} s | {r['measured_s']:.0f} s | {r['efficiency']:.2f} |"
        for r in slices
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
