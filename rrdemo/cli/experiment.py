"""`rrdemo experiment`: run a sweep and log every trajectory (see `rrdemo.runs`).

    rrdemo experiment --tasks logic3,gsm8k --configs 0c5t,1c4t,3c2t,5c0t --strengths strong \\
        --k 32 --m-star 5 --max-tokens 128 --n 16 --out runs/small.jsonl
    rrdemo experiment --sweep sweep.yaml --out runs/paper.jsonl

Run the same command again after a crash or Ctrl-C: it resumes where it stopped.

`python -m rrdemo` imports every command module to build its parser, so the handlers import the
runner (tasks, models, protocols) only when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rrdemo.config import EXPERIMENT_DEFAULTS, ORDERS, beyond_paper
from rrdemo.errors import RRError
from rrdemo.settings import add_flags


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The sweep options; every one left out falls back to the sweep file, then to the paper's default."""
    parser.add_argument(
        "--sweep", help="YAML or JSON file with sweep settings (options below override it)"
    )
    parser.add_argument(
        "--out", required=True, help="JSONL log to write, or to resume when it exists"
    )
    parser.add_argument(
        "--tasks", help="comma-separated: gsm8k,aqua,math500,logic3,logic7,track7 (or demo)"
    )
    parser.add_argument(
        "--model", dest="models", help="model(s) of the homogeneous ensembles, comma-separated"
    )
    parser.add_argument(
        "--configs",
        help="corruption settings like 0c5t,1c4t,3c2t,5c0t; each label's c + t is its N "
        "(default: every c for --n-agents)",
    )
    parser.add_argument(
        "--n-agents",
        type=int,
        help="N when --configs is left out (default 5); given with --configs, every label must "
        "add up to it (7c2t needs N = 9)",
    )
    parser.add_argument(
        "--ensemble",
        dest="ensembles",
        action="append",
        help="an explicit ensemble, seats in order, '*' = corrupted: smollm2*,smollm2,gemma3-270m, "
        "or an ensemble FILE (.yaml/.yml/.json; local and served agents, see docs/serving.md); "
        "repeat the option for several",
    )
    parser.add_argument(
        "--corrupted-last",
        dest="corrupted_first",
        action="store_const",
        const=False,
        help="homogeneous ensembles put corrupted agents in the last seats (default: first)",
    )
    parser.add_argument("--strengths", help="moderate,strong (default both)")
    parser.add_argument(
        "--k",
        help=f"K, tokens per RR turn; several for the K ablation (default {EXPERIMENT_DEFAULTS.k})",
    )
    parser.add_argument(
        "--m-star", type=int, help="M*, trajectories generated per condition (default N)"
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        help=f"L, max new tokens per answer/trajectory (default {EXPERIMENT_DEFAULTS.max_tokens})",
    )
    parser.add_argument("--n", type=int, help="questions per task (default 128, the paper's)")
    parser.add_argument(
        "--seed", type=int, help="seed of the question sample and all sampling (default 0)"
    )
    parser.add_argument(
        "--temperature",
        type=float,
        help=f"sampling temperature (default {EXPERIMENT_DEFAULTS.temperature})",
    )
    parser.add_argument(
        "--top-p", type=float, help=f"nucleus mass (default {EXPERIMENT_DEFAULTS.top_p})"
    )
    parser.add_argument(
        "--order",
        choices=ORDERS,
        help="RR speaking order: a seeded shuffle per trajectory, or seat order (the paper's "
        "agent t mod N) "
        f"(default {EXPERIMENT_DEFAULTS.order})",
    )
    parser.add_argument("--source", choices=("auto", "offline", "hub"), help="question data source")
    parser.add_argument(
        "--backend",
        choices=("auto", "llamacpp", "transformers"),
        help="engine of the offline GGUF models (default auto: llama.cpp when installed, else "
        "transformers; hub models always use transformers); part of each logged config",
    )
    add_flags(parser, beyond_paper(), many=True)
    parser.add_argument(
        "--calibration",
        help="calibration log(s) (rrdemo calibrate), comma-separated: questions are drawn from "
        "the rest of each task, and a log holding one of theirs is refused",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="validate and print the plan; run nothing"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="units run at once, their model calls batched together (worth it on a GPU; "
        "not part of the logged config; default 1)",
    )
    parser.add_argument(
        "--shard",
        help="I/N: run only every N-th unit starting with the I-th, into its own --out; "
        "join the shards' logs with `rrdemo merge-logs` (several processes or machines)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=handler)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `experiment` command."""
    parser = subparsers.add_parser(
        "experiment",
        help="run a sweep (tasks x configs x strengths x K) and log it to JSONL",
        description="Run MAJ and RRMaj on the same questions for every condition of a sweep, "
        "logging each trajectory as it finishes. Rerun the same command to resume.",
    )
    add_arguments(parser)


_SETTINGS = (
    "tasks",
    "models",
    "configs",
    "n_agents",
    "ensembles",
    "corrupted_first",
    "strengths",
    "k",
    "m_star",
    "max_tokens",
    "n",
    "seed",
    "temperature",
    "top_p",
    "order",
    "source",
    "backend",
    "calibration",
)


def sweep_from_args(args: argparse.Namespace) -> dict:
    """The sweep file's settings overridden by the options given on the command line."""
    from rrdemo.runs.spec import load_sweep_file

    raw = load_sweep_file(args.sweep) if args.sweep else {}
    beyond = [s.sweep_key for s in beyond_paper() if s.sweep != "none"]
    for name in (*_SETTINGS, *beyond):
        value = getattr(args, name, None)
        if value is not None:
            raw[name] = value
    raw.setdefault("backend", "auto")  # the command line's default engine: the faster one on CPU
    return raw


def _ensemble_files(raw: dict) -> list:
    """Replace `--ensemble FILE` entries by their seats; return the loaded files (served agents)."""
    from rrdemo.ensemble import load_ensemble

    files, seats = [], []
    for entry in raw.get("ensembles") or []:
        if isinstance(entry, str) and entry.lower().endswith((".yaml", ".yml", ".json")):
            ensemble = load_ensemble(entry)
            files.append(ensemble)
            entry = [{"model": a.model, "corrupted": a.corrupted} for a in ensemble.agents]
        seats.append(entry)
    if files:
        raw["ensembles"] = seats
    return files


def parse_shard(text: str) -> tuple[int, int]:
    """ "2/3" -> (2, 3); RRError unless it is I/N with 1 <= I <= N."""
    index, _, count = text.partition("/")
    if not (index.strip().isdigit() and count.strip().isdigit()):
        raise RRError(f"--shard takes I/N, e.g. 1/2 (the first of two shards), got {text!r}")
    i, n = int(index), int(count)
    if not 1 <= i <= n:
        raise RRError(f"--shard {text}: I must be between 1 and N")
    return i, n


def handler(args: argparse.Namespace) -> int:
    """Validate the whole sweep first (nothing loads or is written on bad input), then run it."""
    from rrdemo.runs.log import read_log
    from rrdemo.runs.runner import run_plan
    from rrdemo.runs.spec import calibration_questions, check_held_out, plan_sweep

    raw = sweep_from_args(args)
    ensemble_files = _ensemble_files(raw)
    served = {name for e in ensemble_files for name in e.served}
    plan = plan_sweep(raw, served=served)
    out = Path(args.out)
    if args.workers < 1:
        raise RRError(f"--workers must be a whole number of at least 1, got {args.workers}")
    shard = parse_shard(args.shard) if args.shard else None
    if out.is_dir():
        raise RRError(f"--out {out} is a folder; give the path of a .jsonl file")
    used = calibration_questions(plan.sweep.get("calibration", []))
    planned: dict[str, set[str]] = {}
    for c in plan.conditions:
        planned.setdefault(c.task.name, set()).update(q.qid for q in c.questions)
    if out.exists():  # a log begun before the calibration was named may hold its questions
        for c in read_log(out).header.get("conditions", []):
            planned.setdefault(c["task"], set()).update(c["questions"])
    check_held_out(planned, used)
    done = len(read_log(out).done) if out.exists() else 0
    print(
        f"{len(plan.conditions)} conditions, {plan.n_units} (condition, question) units"
        + (f", {done} already in {out}" if done else ""),
        file=sys.stderr,
    )
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.dry_run:
        for c in plan.conditions:
            cfg = c.config
            print(
                f"{c.task.name}\t{cfg.label}\t{cfg.strength}\tK={cfg.k}\tM*={cfg.resolved_m}\t"
                f"L={cfg.max_tokens}\t{len(c.questions)} questions\t{c.key}"
            )
        return 0
    from rrdemo.backends.pool import ModelPool

    pool = ModelPool()
    for ensemble in ensemble_files:  # served agents answer through their servers
        ensemble.register(pool)
    try:
        summary = run_plan(
            plan, out, pool, progress=not args.quiet, workers=args.workers, shard=shard
        )
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    print(
        f"done: {summary.units_run} units run, {summary.units_skipped} resumed, "
        f"{summary.decode_tokens} tokens decoded in {summary.wall_s:.0f}s -> {out}",
        file=sys.stderr,
    )
    return 0
