"""Cost parity of RRMaj and MAJ at an equal decoding budget (paper section 3.3), measured.

`python -m bench.cost` (what `make bench` runs) times, in one process, MAJ and RRMaj on the same
questions, agents and seed, alternating MAJ, RRMaj, MAJ, RRMaj ... after an untimed warm-up,
and reads the decode and prefill tokens from the engine's own `ComputeUsed` events. It then runs
RRMaj once more per engine variant (no prefix sharing across agents, no KV reuse at all, no
batching) to show what each optimisation buys, compares the engine's decode throughput with a
plain `model.generate` loop on the same prompts, and measures peak memory for N agents against
one agent in fresh processes. Results go to `bench/results.json` and a table in `bench/README.md`.

Equal decoding budget: chat models often stop long before L, and MAJ answers and RR trajectories
stop at different points, so by default every answer and every trajectory is forced to decode
exactly L tokens (`fixed_length`, bench/variants.py, like `generate(min_new_tokens=L)`). Then MAJ and
RRMaj both decode N x L tokens per question. One extra pass with end-of-sequence allowed is
reported per decoded token.

This module holds the order of the measurements, the targets and the command line; the setting
(`BenchOptions`) is in bench/options.py, the measurements in bench/measure.py, the table writer
in bench/report.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from dataclasses import asdict, fields, replace
from pathlib import Path

from bench.measure import (
    agent_prompts,
    measure_ab,
    measure_rss,
    measure_throughput,
    measure_variants,
    prefill_ratios,
    rss_probe,
    speaker_stats,
    summary,
)
from bench.options import BenchOptions
from bench.report import render_table, write_readme
from rrdemo.errors import RRError

HERE = Path(__file__).resolve().parent
TARGETS = {  # the medians on a 2-core CPU, in the setting where every agent speaks
    "rrmaj_over_maj_wall_ratio": ("<=", 1.05),
    "prefill_tokens_per_trajectory_ratio": ("<=", 1.2),
    "decode_throughput_ratio_vs_generate": (">=", 0.95),
}


def machine_info(threads: int) -> dict:
    import torch
    import transformers

    from rrdemo.backends.hardware import cpu_name

    return {
        "cpu": cpu_name(),
        "cores": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "torch_threads": threads,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": "cuda" if torch.cuda.is_available() else "cpu",
        "load_average_start": [round(x, 2) for x in os.getloadavg()],
    }


def run_benchmark(opts: BenchOptions, base, log=print) -> dict:
    """Every measurement on `base` (a TransformersBackend); the dict written to results.json."""
    import torch

    from bench.variants import twin
    from rrdemo.tasks import get_task, load_questions

    opts.validate()
    torch.set_num_threads(opts.threads)
    machine = machine_info(opts.threads)
    task = get_task(opts.task)
    questions = load_questions(task, n=opts.questions, seed=opts.seed)
    config = opts.config()
    backend = twin(base, fixed_length=True)  # equal decoding budget: exactly L tokens each
    texts = [agent_prompts(backend, config, task, q) for q in questions]
    prompts = [[len(backend.encode(p)) for p in ps] for ps in texts]
    started = time.perf_counter()

    ab = measure_ab(backend, opts, task, questions, log)
    maj, rr = summary(ab["passes"]["MAJ"]), summary(ab["passes"]["RRMaj"])
    rr_prefill = prefill_ratios(ab["passes"]["RRMaj"][0], prompts)
    maj_prefill = prefill_ratios(ab["passes"]["MAJ"][0], prompts)
    speakers = speaker_stats(ab["passes"]["RRMaj"][0], texts)
    log(f"speakers: {speakers}")
    corrupted_only = None
    if opts.corrupted_only:
        old = replace(opts, k=min(100, opts.max_tokens), order="fixed")
        old_ab = measure_ab(backend, old, task, questions, log)
        corrupted_only = {
            "settings": {"k": old.k, "max_tokens": old.max_tokens, "order": old.order},
            "maj": summary(old_ab["passes"]["MAJ"]),
            "rrmaj": {
                **summary(old_ab["passes"]["RRMaj"]),
                **prefill_ratios(old_ab["passes"]["RRMaj"][0], prompts),
                **speaker_stats(old_ab["passes"]["RRMaj"][0], texts),
            },
            "wall_ratio_rrmaj_over_maj": old_ab["ratio"],
        }
    variants = measure_variants(base, opts, task, questions, prompts, log) if opts.variants else {}
    rendered = agent_prompts(backend, config, task, questions[0])
    throughput = measure_throughput(backend, rendered, opts, log)
    rss = measure_rss(opts, log) if opts.rss else None
    machine["load_average_end"] = [round(x, 2) for x in os.getloadavg()]

    results = {
        "rrmaj_over_maj_wall_ratio": ab["ratio"]["median"],
        "prefill_tokens_per_trajectory_ratio": rr_prefill["ratio_speakers"],
        "decode_throughput_ratio_vs_generate": throughput["decode_ratio"]["median"],
        "peak_rss_ratio_5_agents_vs_1": rss["ratio"] if rss else None,
        "speakers_per_trajectory": speakers["speakers_per_trajectory"],
        "machine": machine,
        "settings": {
            **asdict(opts),
            "m": config.resolved_m,
            "label": config.label,
            "strength": config.strength,
            "sampling": asdict(config.sampling),
            "equal_decode_budget": "EOS suppressed: every MAJ answer and RR trajectory decodes L",
            "questions": [q.qid for q in questions],
            "agent_prompt_tokens": prompts,
        },
        "maj": {**maj, **maj_prefill},
        "rrmaj": {**rr, **rr_prefill, **speakers},
        "wall_ratio_rrmaj_over_maj": ab["ratio"],
        "corrupted_only": corrupted_only,
        "variants": variants,
        "throughput": throughput,
        "memory": rss,
        "bench_wall_s": round(time.perf_counter() - started, 1),
    }
    results["targets"] = _targets(results)
    return results


def _targets(results: dict) -> dict:
    out = {}
    for key, (op, bound) in TARGETS.items():
        value = results[key]
        met = value <= bound if op == "<=" else value >= bound
        out[key] = {"value": value, "target": f"{op} {bound}", "met": met}
    memory = results["memory"]
    if memory:
        out["one_copy_of_weights"] = {
            "value": memory["extra_mb"],
            "target": f"extra peak RSS of N agents < weights ({memory['one_agent']['weights_mb']} MB)",
            "met": memory["one_copy_of_weights"],
        }
    return out


# -- command line ----------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    d = BenchOptions()
    p = argparse.ArgumentParser(
        prog="python -m bench.cost",
        description="Wall time, tokens and memory of MAJ vs RRMaj at equal decoding budget.",
    )
    p.add_argument("--model", default=d.model, help="registry name, hub id or folder")
    p.add_argument("--n", type=int, default=d.n, help="N agents (default %(default)s)")
    p.add_argument("--c", type=int, default=d.c, help="corrupted agents (default %(default)s)")
    p.add_argument("--k", type=int, default=d.k, help="K tokens per RR turn")
    p.add_argument("--max-tokens", type=int, default=d.max_tokens, help="L tokens per answer")
    p.add_argument("--m", type=int, default=None, help="M RR trajectories (default N)")
    p.add_argument(
        "--order", choices=("shuffled", "fixed"), default=d.order, help="RR speaking order"
    )
    p.add_argument("--repeats", type=int, default=d.repeats, help="timed MAJ/RRMaj pairs")
    p.add_argument("--questions", type=int, default=d.questions, help="questions per pass")
    p.add_argument("--task", default=d.task, help="benchmark the questions come from")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--threads", type=int, default=d.threads, help="torch.set_num_threads")
    p.add_argument("--no-variants", action="store_true", help="skip the engine variants")
    p.add_argument("--no-rss", action="store_true", help="skip the memory probes")
    p.add_argument(
        "--no-corrupted-only",
        action="store_true",
        help="skip the second row (fixed order, corrupted first, K=100: only corrupted agents write)",
    )
    p.add_argument("--out", type=Path, default=HERE / "results.json")
    p.add_argument(
        "--readme", type=Path, default=HERE / "README.md", help="file to put the table in"
    )
    p.add_argument("--rss-probe", type=int, default=None, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        given = {f.name: getattr(args, f.name) for f in fields(BenchOptions) if f.name in args}
        switched = {s: not getattr(args, f"no_{s}") for s in ("variants", "rss", "corrupted_only")}
        opts = BenchOptions(**given, **switched)
        opts.validate()
        opts.config()  # K <= L, M >= 1 and the rest, checked before any model loads
        if args.rss_probe is not None:
            print(json.dumps(rss_probe(opts, args.rss_probe)))
            return 0
        from rrdemo.backends.loading import load_backend

        base = load_backend(opts.model)
        if not hasattr(base, "model"):
            raise RRError(f"{opts.model!r} is not a local transformers model; the bench needs one")
        results = run_benchmark(opts, base, log=lambda msg: print(msg, file=sys.stderr))
    except RRError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    write_readme(args.readme, render_table(results))
    print(render_table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
