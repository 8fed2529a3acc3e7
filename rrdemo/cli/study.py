"""`rrdemo study FILE run | status | build`: a committed result run, watched and rebuilt from its
study file (`rrdemo.study`).

    rrdemo study assets/evidence_aqua/study.yaml run --dry-run       # the plan, a token estimate
    rrdemo study assets/evidence_aqua/study.yaml run --shard 1/2     # one shard (one per core)
    rrdemo study assets/evidence_aqua/study.yaml status              # done / planned, all shards
    rrdemo study assets/evidence_aqua/study.yaml build               # merge, re-extract, publish

`run` is `rrdemo experiment` or `rrdemo calibrate` with the study's settings, into the study's log
(or shard I's log, `<stem>-I-of-N.jsonl`); run it again to resume. `build` merges the shards
into the log and rewrites every published file from it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rrdemo.errors import RRError

VERBS = ("run", "status", "build")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `study` command."""
    parser = subparsers.add_parser(
        "study",
        help="run, watch or rebuild a study (one file: settings, shards, published files)",
        description="A study file holds a result's kind (experiment or calibration), settings, "
        "shard count and what is published from its log. run: run it (or one shard), resuming; "
        "status: done / planned over all its logs; build: merge the shards, re-extract, write "
        "the report, board rows and gallery settings.",
    )
    parser.add_argument("file", help="the study file (assets/<study>/study.yaml)")
    parser.add_argument("verb", choices=VERBS, help="run, status or build")
    parser.add_argument(
        "--shard", help="run: I/N, the I-th of the study's N shards, into its own log"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="run: the plan and a token estimate; build: the steps; nothing is run or written",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="run (experiment): units run at once (default 1)"
    )
    parser.add_argument(
        "--tokens-per-second",
        "--rate",
        dest="tokens_per_second",
        type=float,
        help="run --dry-run, status: a decode rate (tokens/s) for the time, in place of the "
        "speeds measured here (another machine, a served endpoint)",
    )
    parser.add_argument(
        "--flow",
        action="store_true",
        help="run (llama.cpp): continuous batching, with --workers for an experiment",
    )
    parser.add_argument("--quiet", action="store_true", help="run: no progress bar")
    parser.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    from rrdemo.study.file import load_study

    study = load_study(args.file)
    if args.verb != "run" and args.shard:
        raise RRError(f"--shard is for run; {args.verb} reads all of the study's logs")
    if args.verb == "status":
        return _status(study, args.tokens_per_second)
    if args.verb == "build":
        return _build(study, args.dry_run)
    if study.kind == "pool":
        raise RRError(f"{study.path} pools other runs' logs and runs nothing; build it")
    out = study.log
    if args.shard:
        from rrdemo.cli.experiment import parse_shard

        index, count = parse_shard(args.shard)
        if count != study.shards:
            raise RRError(
                f"{study.path} runs as {study.shards} shard(s); give --shard I/{study.shards} "
                "(or no --shard: one process into its log)"
            )
        out = study.shard_log(index, count)
    shard = [] if not args.shard else ["--shard", args.shard]
    flags = [*shard, *(["--dry-run"] if args.dry_run else []), *(["--quiet"] if args.quiet else [])]
    flags += ["--flow"] if args.flow else []
    if study.kind == "experiment":
        return _run_experiment(study, out, flags, args)
    return _run_calibration(study, out, flags, args.tokens_per_second)


def _run_experiment(study, out: Path, flags: list[str], args: argparse.Namespace) -> int:
    """`rrdemo experiment` with the study's settings in place of a sweep file."""
    from rrdemo.cli.experiment import add_arguments
    from rrdemo.cli.experiment import handler as experiment

    parser = argparse.ArgumentParser(prog="rrdemo study")
    add_arguments(parser)
    more = ["--workers", str(args.workers)]
    rate, source, gpus = _rate(study, args.tokens_per_second)
    if rate is not None:
        more += ["--tokens-per-second", str(rate)]
    run_args = parser.parse_args(["--out", str(out), *flags, *more])
    run_args.sweep, run_args.settings = str(study.path), study.settings
    # the dry run's time: measured on all the study's logs; its shards run side by side
    run_args.rate_logs = study.logs() or [out]
    run_args.shards = 1 if args.shard else study.shards
    run_args.rate_source, run_args.gpus = source, gpus
    return experiment(run_args)


def _rate(study, given: float | None) -> tuple[float | None, str, int | None]:
    """(decode rate, where it comes from, GPUs it runs on): --rate, else the study's stated
    served throughput, else none (the speeds measured here)."""
    if given is not None:
        return given, "the given rate", None
    if study.throughput:
        stated = study.throughput
        note = f" ({stated.note})" if stated.note else ""
        return stated.tokens_per_s, f"the study's stated server throughput{note}", stated.gpus
    return None, "", None


def _run_calibration(study, out: Path, flags: list[str], rate: float | None) -> int:
    """`rrdemo calibrate` with the study's settings as its options."""
    from rrdemo.calibration.plan import plan_calibration
    from rrdemo.cli.calibrate import _SETTINGS
    from rrdemo.cli.calibrate import handler as calibrate
    from rrdemo.cli.calibrate import register as register_calibrate

    unknown = [k for k in study.settings if k not in _SETTINGS]
    if unknown:
        raise RRError(
            f"{study.path}: unknown calibration setting {', '.join(unknown)} "
            f"(allowed: {', '.join(_SETTINGS)})"
        )
    plan_calibration(study.settings)  # bad settings stop here, before the calibrate options
    # (its dry run counts only the answers the log lacks, and their tokens)
    parser = argparse.ArgumentParser(prog="rrdemo study")
    register_calibrate(parser.add_subparsers())  # every option at its default, then the study's
    run_args = parser.parse_args(
        ["calibrate", "--out", str(out), "--batch", str(study.batch), *flags]
    )
    for key in _SETTINGS:
        setattr(run_args, key, study.settings.get(key))
    run_args.rate = rate
    return calibrate(run_args)


def _status(study, rate: float | None = None) -> int:
    if study.kind == "pool":
        for path in study.pooled:
            print(f"log: {path} ({'present' if path.is_file() else 'missing'})")
        return 0
    logs = study.logs()
    if not logs:
        print(f"{study.name}: nothing run yet (no {study.log.name} and no shard log)")
        return 0
    for path in logs:
        print(f"log: {path}")
    if study.kind == "experiment":
        from rrdemo.runs.status import render, shards_status

        print(render(shards_status(logs)))
        print(_time_left(study, logs, rate))
        return 0
    from rrdemo.calibration.log import read_calibration
    from rrdemo.calibration.plan import plan_calibration

    planned = plan_calibration(study.settings).n_answers
    done: set[tuple[str, str]] = set()
    for path in logs:
        answers = read_calibration(path).done
        print(f"  {path.name}: {len(answers)} answers")
        done |= answers
    print(f"{study.name}: {len(done)} of {planned} answers done, {planned - len(done)} left")
    return 0


def _time_left(study, logs: list[Path], rate: float | None) -> str:
    """The expected time of the units no log holds yet, from the speeds measured in the study's
    own logs (over the committed rates file's), its shards side by side."""
    from rrdemo.cli.experiment import served_models
    from rrdemo.rates import expected_time, rates_for
    from rrdemo.runs.log import read_log
    from rrdemo.runs.runner import unit_order
    from rrdemo.runs.spec import plan_sweep

    raw = dict(study.settings)
    try:
        served = served_models(raw, {}, str(study.path))
        plan = plan_sweep(raw, served={name: agent.seat() for name, agent in served.items()})
    except RRError as exc:  # the plan needs what a run needs (an engine, the question data)
        return f"time left: not known ({exc})"
    done = set().union(*(read_log(path).done for path in logs))
    left = [(c, q) for c, q in unit_order(plan) if (c.key, q.qid) not in done]
    rate, source, gpus = _rate(study, rate)
    estimate = expected_time(left, rates_for(logs), rate, source)
    return "time left: " + estimate.describe(study.shards, gpus).removeprefix("expected time: ")


def _build(study, dry_run: bool) -> int:
    from rrdemo.study.build import build, build_steps

    steps = build_steps(study)
    if dry_run:
        print("\n".join(steps) if steps else f"{study.name}: nothing to build")
        return 0
    build(study, say=lambda line: print(line, file=sys.stderr))
    return 0
