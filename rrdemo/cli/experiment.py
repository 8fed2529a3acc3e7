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

from rrdemo.config import BACKEND_CHOICES, DTYPES, ORDERS, beyond_paper
from rrdemo.defaults import EXPERIMENT_DEFAULTS
from rrdemo.errors import RRError
from rrdemo.settings import add_flags


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The sweep options; every one left out falls back to the sweep file, then to the paper's default."""
    _what_and_who(parser)
    _run_settings(parser)
    _how_it_runs(parser)
    parser.set_defaults(func=handler)


def _what_and_who(parser: argparse.ArgumentParser) -> None:
    """The sweep file, the log, the tasks and the ensembles."""
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
        "--models",
        "--model",  # the singular reads naturally for one model; both spellings are one option
        dest="models",
        help="model(s) of the homogeneous ensembles, comma-separated",
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


def _run_settings(parser: argparse.ArgumentParser) -> None:
    """The settings of each run, all in its logged config: the paper's, then those beyond it."""
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
        "--n-by-config",
        help="fewer questions for some configs, like 0c5t=40,5c0t=40: each runs the first ones of "
        "the task's n (a log resumes under new counts when nothing else changed)",
    )
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
        choices=BACKEND_CHOICES,
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
        "--dtype",
        choices=DTYPES,
        help="dtype of local models on transformers (default: bfloat16 on a GPU, float32 on "
        "CPU); part of each logged config",
    )


def _how_it_runs(parser: argparse.ArgumentParser) -> None:
    """How the sweep is carried out, none of it in the logged config: devices, a dry run, units
    at once, shards."""
    parser.add_argument(
        "--device-map",
        help="where transformers puts a model's layers: auto spreads one over every GPU (the "
        "default when there are several), or cpu, cuda, cuda:1 (default: the one device); "
        "not part of the logged config",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and print the plan (conditions, models, a token estimate); run nothing",
    )
    parser.add_argument(
        "--tokens-per-second",
        "--rate",
        dest="tokens_per_second",
        type=float,
        help="with --dry-run: a decode rate (tokens/s) for the time, in place of the speeds "
        "measured here (another machine, a served endpoint)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="units run at once, their model calls batched together (worth it on a GPU; "
        "not part of the logged config; default 1)",
    )
    parser.add_argument(
        "--flow",
        action="store_true",
        help="with --workers on llama.cpp: the units' calls share every decoding step and a unit "
        "that ends makes room for the next at once (continuous batching), instead of waves",
    )
    parser.add_argument(
        "--shard",
        help="I/N: run only every N-th unit starting with the I-th, into its own --out; "
        "join the shards' logs with `rrdemo merge-logs` (several processes or machines)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


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
    "n_by_config",
    "seed",
    "temperature",
    "top_p",
    "order",
    "source",
    "backend",
    "calibration",
    "dtype",
)
FLAG = "flag"  # where a setting given on the command line came from


def sweep_from_args(args: argparse.Namespace, origin: dict[str, str] | None = None) -> dict:
    """The sweep file's settings overridden by the options given on the command line; `origin`,
    when given, gets where each setting came from ("flag", "FILE")."""
    from rrdemo.runs.sweep import load_sweep_file

    origin = {} if origin is None else origin
    settings = getattr(args, "settings", None)  # a study file's settings (rrdemo study)
    if settings is not None:
        raw = dict(settings)
    else:
        raw = load_sweep_file(args.sweep) if args.sweep else {}
    origin.update(dict.fromkeys(raw, Path(args.sweep).name if args.sweep else ""))
    beyond = [s.sweep_key for s in beyond_paper() if s.sweep != "none"]
    for name in (*_SETTINGS, *beyond):
        value = getattr(args, name, None)
        if value is not None:
            raw[name], origin[name] = value, FLAG
    raw.setdefault("backend", "auto")  # the command line's default engine: the faster one on CPU
    return raw


def served_models(raw: dict, origin: dict[str, str], source: str = "<sweep>") -> dict:
    """The served models of a sweep, by name (`rrdemo.ensemble.ServedAgent`): its file's
    `endpoints:` and its ensemble files' served agents. Each ensemble FILE entry becomes its
    seats, and its `run:` block its settings unless a flag gives them (two files that disagree
    on one are refused); `origin` says which file gave which."""
    from rrdemo.ensemble import load_ensemble, served_endpoints

    served = served_endpoints(raw.pop("endpoints", None), source)
    origin.pop("endpoints", None)
    seats, by_file = [], {}
    for entry in raw.get("ensembles") or []:
        if isinstance(entry, str) and entry.lower().endswith((".yaml", ".yml", ".json")):
            ensemble = load_ensemble(entry)
            for name, agent in ensemble.served.items():
                if served.setdefault(name, agent) != agent:
                    raise RRError(
                        f"{entry}: served model {name!r} is also named elsewhere with other "
                        "settings; give one of them another name"
                    )
            _run_block(raw, origin, ensemble, Path(entry).name, by_file)
            entry = [{"model": a.model, "corrupted": a.corrupted} for a in ensemble.agents]
        seats.append(entry)
    if seats:
        raw["ensembles"] = seats
    return served


def _run_block(
    raw: dict, origin: dict[str, str], ensemble, name: str, by_file: dict[str, str]
) -> None:
    """An ensemble file's run settings into the sweep: over a sweep file's and the sweep's
    defaults, under the flags. Where the file is silent its RunConfig default replaces only the
    sweep's default. `by_file` remembers which ensemble file set what: two that disagree are
    refused."""
    from rrdemo.ensemble import run_sweep_keys

    keys = run_sweep_keys()
    given = {keys[key] for key in ensemble.given}
    for key, value in ensemble.sweep_settings().items():
        if origin.get(key) == FLAG or (key not in given and key in origin):
            continue
        if key not in given:
            if key not in by_file:
                raw[key] = value
            continue
        if key in by_file and raw[key] != value:
            raise RRError(
                f"{name} sets {key} to {value!r} but {by_file[key]} to {raw[key]!r}; make them "
                "agree or give it on the command line"
            )
        raw[key], origin[key], by_file[key] = value, name, name


def settings_text(sweep: dict, origin: dict[str, str]) -> str:
    """The sweep's settings and where each came from (a flag, a file, the default): the main
    ones always, the others when something set them."""
    main = ("tasks", "models", "configs", "strengths", "k", "m_star", "max_tokens", "n", "seed")
    main += ("temperature", "top_p", "order", "backend")
    lines = []
    for key, value in sweep.items():
        if key not in main and key not in origin:
            continue
        if key in ("models", "configs") and not value:
            continue
        where = origin.get(key) or "default"
        where = f"file {where}" if where not in (FLAG, "default") else where
        shown = ",".join(map(str, value)) if isinstance(value, list) else value
        if key == "ensembles":
            shown = f"{len(value)} explicit"
        lines.append(f"  {key:<18} {'N' if shown is None else shown!s:<24} {where}")
    return "settings (value, from):\n" + "\n".join(lines)


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
    from rrdemo.runs.runner import run_plan, unit_order
    from rrdemo.runs.spec import plan_sweep
    from rrdemo.runs.write import check_resumable

    origin: dict[str, str] = {}
    raw = sweep_from_args(args, origin)
    served = served_models(raw, origin, args.sweep or "<sweep>")
    plan = plan_sweep(raw, served={name: agent.seat() for name, agent in served.items()})
    out = Path(args.out)
    if args.workers < 1:
        raise RRError(f"--workers must be a whole number of at least 1, got {args.workers}")
    shard = parse_shard(args.shard) if args.shard else None
    if out.is_dir():
        raise RRError(f"--out {out} is a folder; give the path of a .jsonl file")
    _check_held_out(plan, out)
    resumed = check_resumable(out, plan)  # another sweep in --out is refused, dry run or not
    done = resumed[0].done if resumed else set()
    order = unit_order(plan, shard)  # this process's units (a shard's share)
    left = [(c, q) for c, q in order if (c.key, q.qid) not in done]
    print(
        f"{len(plan.conditions)} conditions, {plan.n_units} (condition, question) units"
        + (f", this shard's {len(order)}" if shard else "")
        + (f", {len(order) - len(left)} already in {out}, {len(left)} left" if done else "")
        + (
            " (its question counts change: its header is rewritten)"
            if resumed and resumed[1]
            else ""
        ),
        file=sys.stderr,
    )
    print(settings_text(plan.sweep, origin), file=sys.stderr)
    for agent in served.values():
        print(f"served: {agent.describe()}", file=sys.stderr)
    for warning in plan.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.tokens_per_second is not None and not args.tokens_per_second > 0:
        raise RRError(
            f"--tokens-per-second must be a positive number, got {args.tokens_per_second}"
        )
    backends = [agent.build() for agent in served.values()]
    for backend in backends:  # reachable and serving its model, before anything is written
        missing = backend.missing_key() if args.dry_run else None
        if missing:  # a plan needs no key: only a request does (a run stops here)
            print(f"not checked: {missing}; a run needs it, a dry run does not", file=sys.stderr)
            continue
        backend.check_serving()
    if args.dry_run:
        _dry_run(args, plan, served, left, out)
        return 0
    from rrdemo.backends.pool import ModelPool

    pool = ModelPool(**({"device_map": args.device_map} if args.device_map else {}))
    for backend in backends:  # served agents answer through their servers
        pool.put(backend)
    from rrdemo.memory import check_memory

    check_memory((c.config for c in plan.conditions), pool, public=False, maj_samples="M")
    try:
        summary = run_plan(
            plan, out, pool, progress=not args.quiet, workers=args.workers, shard=shard,
            flow=args.flow,
        )  # fmt: skip
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    print(
        f"done: {summary.units_run} units run, {summary.units_skipped} resumed, "
        f"{summary.decode_tokens} tokens decoded in {summary.wall_s:.0f}s -> {out}",
        file=sys.stderr,
    )
    return 0


def _check_held_out(plan, out: Path) -> None:
    """Refuse a sweep whose questions, or those of the log it resumes, a named calibration used."""
    from rrdemo.runs.log import read_log
    from rrdemo.runs.spec import calibration_questions, check_held_out

    used = calibration_questions(plan.sweep.get("calibration", []))
    planned: dict[str, set[str]] = {}
    for c in plan.conditions:
        planned.setdefault(c.task.name, set()).update(q.qid for q in c.questions)
    if out.exists():  # a log begun before the calibration was named may hold its questions
        for c in read_log(out).header.get("conditions", []):
            planned.setdefault(c["task"], set()).update(c["questions"])
    check_held_out(planned, used)


def _dry_run(args: argparse.Namespace, plan, served: dict, left: list, out: Path) -> None:
    """The plan and its expected time, from the rates measured here or the given rate."""
    from rrdemo.rates import expected_time, rates_for

    _print_plan(plan, served, args.tokens_per_second, left)
    own = getattr(args, "rate_logs", None) or [out]  # a study's logs, all its shards'
    source = getattr(args, "rate_source", None) or "the given rate"
    timed = expected_time(left, rates_for(own), args.tokens_per_second, source)
    print(timed.describe(getattr(args, "shards", 1), getattr(args, "gpus", None)), file=sys.stderr)


def _print_plan(plan, served: dict, tokens_per_second: float | None, left: list) -> None:
    """One line per condition (task, models, label, strength, K, M*, L, questions, key), then
    the token estimate of the units `left` to run."""
    from rrdemo.runs.estimate import estimate_plan, local_counters
    from rrdemo.runs.spec import ensemble_name

    for c in plan.conditions:
        cfg = c.config
        models = ensemble_name(cfg.agents, c.corrupted_first)
        print(
            f"{c.task.name}\t{models}\t{cfg.label}\t{cfg.strength}\tK={cfg.k}\t"
            f"M*={cfg.resolved_m}\tL={cfg.max_tokens}\t{len(c.questions)} questions\t{c.key}"
        )
    tokenizers = {name: agent.tokenizer for name, agent in served.items()}
    estimate = estimate_plan(plan, local_counters(tokenizers), left)
    print(estimate.describe(tokens_per_second), file=sys.stderr)
