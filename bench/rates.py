"""The speeds behind every time estimate (rrdemo.rates), fitted on the committed logs, and how far
the estimate lands on each logged study when that study is left out of the fit.

Writes assets/rates.json (what `rrdemo study FILE run --dry-run`, `status`, `experiment
--dry-run` and the Arena read) and prints a table: per log, its measured wall time (the sum of
its units' method times, one process), the estimate from the other logs' speeds and lengths, and
the estimate from the other logs' speeds with this log's own decoded tokens (the speed line
alone). No model runs; it reads the logs.

    .venv/bin/python -m bench.rates
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rrdemo.rates import Rates, UnitShape, duration, unit_estimate
from rrdemo.rates_fit import fit_rates
from rrdemo.runs.log import read_log

ROOT = Path(__file__).resolve().parent.parent
LOGS = (
    "assets/evidence/log.jsonl",
    "assets/evidence_aqua/log.jsonl",
    "assets/evidence_pass/log.jsonl",
    "assets/qwen15b/log.jsonl",
    "assets/experiment_small.jsonl",
    "assets/experiment_small_shuffled.jsonl",
    "assets/meter05b/log.jsonl",
    "assets/gallery_styles/log.jsonl",
    "assets/timing_smollm2/log.jsonl",
)
# Lengths only: llama.cpp on both cores' threads in one process (before studies ran as one pinned
# thread per shard), so its speed is not this machine's llama.cpp speed as studies run now.
LENGTHS_ONLY = ("assets/experiment_small_shuffled.jsonl",)
CALIBRATIONS = (
    "assets/calibration/qwen05b.jsonl",
    "assets/calibration/qwen15b.jsonl",
    "assets/calibration/qwen15b_arith.jsonl",
    "assets/calibration/qwen15b_styles.jsonl",
)
CONDITIONS = (
    "the evidence logs and timing_smollm2 ran as llama.cpp processes pinned one per core, one "
    "thread each, beside another such process; the others as their study files and docs say "
    "(not recorded in the logs); experiment_small_shuffled gives lengths only"
)


def measured_and_estimated(path: Path, rates: Rates) -> tuple[float, float | None, float | None]:
    """(measured seconds, estimate from `rates` alone, estimate from `rates`' speeds with the
    log's own decoded tokens) over the log's finished units; None where a speed is missing."""
    log = read_log(path)
    measured, full, line = 0.0, 0.0, 0.0
    for done, _ in log.units():
        if done is None:
            continue
        shape = UnitShape.logged(log.conditions[done["condition"]])
        compute = done.get("compute") or {}
        for method, _tokens, _bound, seconds in unit_estimate(shape, rates):
            logged = compute.get(method) or {}
            measured += float(logged.get("wall_s") or 0.0)
            speed = rates.speed(shape.group[0], shape.engine, method, shape.meter, shape.eos_policy)
            full = None if full is None or seconds is None else full + seconds
            if line is not None and speed is not None:
                line += speed.seconds(float(logged.get("decode_tokens") or 0))
            else:
                line = None
    return measured, full, line


def _share(estimate: float | None, measured: float) -> str:
    return "no speed" if estimate is None else f"{100 * (estimate - measured) / measured:+.0f}%"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT / "assets" / "rates.json"))
    args = parser.parse_args(argv)
    logs = [ROOT / p for p in LOGS if (ROOT / p).is_file()]
    calibrations = [ROOT / p for p in CALIBRATIONS if (ROOT / p).is_file()]
    document = fit_rates(
        [p.relative_to(ROOT) for p in logs],
        [p.relative_to(ROOT) for p in calibrations],
        conditions=CONDITIONS,
        lengths_only=LENGTHS_ONLY,
    )
    Path(args.out).write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {args.out}: {len(document['speeds'])} speed lines, {len(document['lengths'])} "
          "length groups")  # fmt: skip
    print("\n| log | units | measured (one process) | estimate, others' speeds and lengths | "
          "others' speeds, its own tokens |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: |")
    for path in logs:
        others = [p.relative_to(ROOT) for p in logs if p != path]
        calibrated = [p.relative_to(ROOT) for p in calibrations]
        rates = Rates(
            fit_rates(others, calibrated, conditions=CONDITIONS, lengths_only=LENGTHS_ONLY)
        )
        measured, full, line = measured_and_estimated(path, rates)
        units = len(read_log(path).finished_units())
        if not measured:
            continue
        print(
            f"| {path.relative_to(ROOT)} | {units} | {duration(measured)} | "
            f"{'-' if full is None else duration(full)} ({_share(full, measured)}) | "
            f"{'-' if line is None else duration(line)} ({_share(line, measured)}) |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
