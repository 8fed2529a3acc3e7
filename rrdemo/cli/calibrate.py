"""`rrdemo calibrate`: single agents over model x task x prompt style x injection (no RR, no vote).

    rrdemo calibrate --models qwen2.5-coder-1.5b --tasks all --n 20 \\
        --out assets/calibration/qwen15b.jsonl
    rrdemo calibrate --report assets/calibration/qwen15b.jsonl   # the table and plot again

Run the same command again after a crash or Ctrl-C: it resumes. `--shard I/N` answers every N-th
answer into its own --out (one process per core); `rrdemo merge-logs` joins the shards. The
report (calibration.md, calibration.csv, calibration.html/.png) is written beside the log in
`<log stem>_report/`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rrdemo.errors import RRError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `calibrate` command."""
    from rrdemo.calibration.plan import DEFAULTS, INJECTIONS, calibrated

    style = calibrated("styles")

    parser = subparsers.add_parser(
        "calibrate",
        help="measure ceiling and obedience of single agents (choose where a rescue can show)",
        description="One agent per answer over model x task x prompt style x injection on a "
        "seeded calibration split: ceiling (accuracy without injection), obedience (injected "
        "answers equal to the target), answer, placeholder and cut rates, mean length.",
    )
    parser.add_argument("--out", help="JSONL log to write, or to resume when it exists")
    parser.add_argument("--report", metavar="LOG", help="only (re)write the report of a log")
    parser.add_argument("--models", help=f"comma-separated (default {DEFAULTS['models'][0]})")
    parser.add_argument("--tasks", help="comma-separated paper tasks, or all (default all)")
    parser.add_argument(
        "--styles",
        help=f"{style.what}s: {','.join(style.choices)} (default {','.join(DEFAULTS['styles'])})",
    )
    parser.add_argument(
        "--injections", help=f"{','.join(INJECTIONS)} (default none,moderate,strong)"
    )
    parser.add_argument("--custom-template", help="the custom injection, with a {target} slot")
    parser.add_argument("--n", help=f"questions per task (default {DEFAULTS['n']})")
    parser.add_argument("--split-seed", help=f"draws the split (default {DEFAULTS['split_seed']})")
    parser.add_argument("--max-tokens", help=f"L per answer (default {DEFAULTS['max_tokens']})")
    parser.add_argument("--temperature", help=f"default {DEFAULTS['temperature']}")
    parser.add_argument("--top-p", help=f"default {DEFAULTS['top_p']}")
    parser.add_argument("--seed", help=f"sampling and targets (default {DEFAULTS['seed']})")
    parser.add_argument("--source", help="question data: auto, offline, hub (default auto)")
    parser.add_argument("--backend", help="engine of local models (default auto)")
    parser.add_argument("--batch", type=int, default=16, help="answers decoded together (16)")
    parser.add_argument(
        "--flow",
        action="store_true",
        help="llama.cpp: refill a finished answer's place at once instead of static batches "
        "(continuous batching; bench/README.md says when it pays)",
    )
    parser.add_argument(
        "--shard",
        help="I/N: answer only every N-th answer starting with the I-th, into its own --out; "
        "join the shards' logs with `rrdemo merge-logs` (one process per core)",
    )
    parser.add_argument(
        "--k",
        help="comma-separated K: the report also shows the share of answers stating the target "
        "(injected) or their answer (honest) within their first K tokens (16 always)",
    )
    parser.add_argument("--dry-run", action="store_true", help="show the cells and stop")
    parser.add_argument(
        "--rate",
        type=float,
        help="with --dry-run: decoded tokens/s that turn the tokens into a time",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(func=handler)


_SETTINGS = (
    "models", "tasks", "styles", "injections", "custom_template", "n", "split_seed",
    "max_tokens", "temperature", "top_p", "seed", "source", "backend",
)  # fmt: skip


def report_dir(log: Path) -> Path:
    return log.with_name(f"{log.stem}_report")


def _ks(value: str | None) -> tuple[int, ...]:
    """The --k values: whole numbers from 1 to L's limit, comma-separated."""
    from rrdemo.limits import limits
    from rrdemo.settings import whole_number

    if value is None:
        return ()
    words = [w.strip() for w in value.split(",") if w.strip()]
    if not words:
        raise RRError("--k needs at least one whole number of tokens, e.g. --k 8,32")
    ks = tuple(whole_number(w, "K (--k)", minimum=1) for w in words)
    for k in ks:
        limits().check("tokens", k, "K (--k)")
    return ks


def _prediction_text(log: Path) -> str:
    """MAJ predicted at the vote per config, the room and rule 3's picks, for the terminal."""
    from rrdemo.calibration.log import read_calibration
    from rrdemo.calibration.predict import rule3_cells
    from rrdemo.calibration.table import K_RULE
    from rrdemo.calibration.vote_table import prediction_table, rule3_line

    cells = rule3_cells(read_calibration(log))
    if not cells:
        return "MAJ predicted at the vote: no injected cell with its cell without injection yet"
    header, body = prediction_table(cells, K_RULE)
    keep = [i for i, h in enumerate(header) if h != "model"]
    rows = [[header[i] for i in keep]] + [[r[i].replace("**", "") for i in keep] for r in body]
    widths = [max(len(r[i]) for r in rows) for i in range(len(keep))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows]
    title = "MAJ predicted at the vote (N = 5, % [95% bootstrap interval over questions])"
    return "\n".join([title, *lines, rule3_line(cells).replace("**", "")])


def _left(plan, out: Path, shard: tuple[int, int] | None) -> tuple[list, int]:
    """This process's rows (a shard's share) and how many of them the log at `out` lacks."""
    from rrdemo.calibration.log import read_calibration
    from rrdemo.calibration.runner import answer_order

    order = answer_order(plan)
    if shard is not None:
        order = order[shard[0] - 1 :: shard[1]]
    done = read_calibration(out).done
    return order, sum((r.cell.key, r.question.qid) not in done for r in order)


def handler(args: argparse.Namespace) -> int:
    """Validate everything first (nothing loads or is written on bad input), then run."""
    from rrdemo.calibration.plan import plan_calibration
    from rrdemo.calibration.report import write_calibration_report
    from rrdemo.cli.experiment import parse_shard

    ks = _ks(args.k)
    if args.report:
        log = Path(args.report)
        md = write_calibration_report(log, report_dir(log), ks=ks)
        print(_prediction_text(log))
        print(f"report: {md}")
        return 0
    if not args.out:
        raise RRError("give --out LOG to run a calibration, or --report LOG for its report")
    out = Path(args.out)
    if out.is_dir():
        raise RRError(f"--out {out} is a folder; give the path of a .jsonl file")
    if args.batch < 1:
        raise RRError(f"--batch must be at least 1, got {args.batch}")
    shard = parse_shard(args.shard) if args.shard else None
    plan = plan_calibration({k: getattr(args, k) for k in _SETTINGS})
    if args.flow:
        from rrdemo.calibration.runner import check_flow

        check_flow(plan)
    print(
        f"{len(plan.cells)} cells, {plan.n_answers} answers "
        f"({', '.join(f'{t}: {len(q)} questions' for t, q in plan.split.items())})",
        file=sys.stderr,
    )
    if shard is not None:
        print(f"shard {shard[0]}/{shard[1]}: every {shard[1]}-th of them", file=sys.stderr)
    if out.exists():
        order, left = _left(plan, out, shard)
        print(f"{len(order) - left} already in {out}, {left} left", file=sys.stderr)
    if args.dry_run:
        from rrdemo.rates import calibration_estimate

        for cell in plan.cells:
            print(f"{cell.model}\t{cell.task}\t{cell.style}\t{cell.injection}")
        print(calibration_estimate(plan, out, shard, args.rate), file=sys.stderr)
        return 0
    from rrdemo.backends.pool import ModelPool
    from rrdemo.calibration.runner import run_calibration

    try:
        written = run_calibration(
            plan, out, ModelPool(), args.batch, progress=not args.quiet, shard=shard,
            flow=args.flow,
        )  # fmt: skip
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    md = write_calibration_report(out, report_dir(out), ks=ks)
    print(f"done: {written} answers written -> {out}; report {md}", file=sys.stderr)
    return 0
