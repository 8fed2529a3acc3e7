"""`python -m rrdemo replay LOG --question ID`: a recorded question, streamed as `rrdemo run` does."""

from __future__ import annotations

import json
import sys

from rrdemo.cli.run import _JsonPrinter, _TextPrinter, _use_colour, speaker_summary
from rrdemo.fold import Fold
from rrdemo.replay import finished_units, read_unit, replay
from rrdemo.runs.log import read_log


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "replay",
        help="replay one recorded question of a run log, streamed like `run`",
        description="Replay one question of a run log (written by `rrdemo experiment --out`): "
        "its chunks, answers, votes and decisions, printed as `rrdemo run` prints a live run.",
    )
    p.add_argument("log", help="the .jsonl run log")
    p.add_argument("--question", help="the question id, e.g. logic3-0009 (omit to list them)")
    p.add_argument(
        "--condition", help="the condition key, when the log has the question under several"
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=0.0,
        help="play the run back over about this many seconds (default 0: at once)",
    )
    p.add_argument("--json", action="store_true", help="print every event as a JSON line")
    p.add_argument("--deltas", action="store_true", help="with --json, include token-level deltas")
    p.add_argument("--no-color", action="store_true", help="plain text (also when NO_COLOR is set)")
    p.set_defaults(func=handle)


def handle(args) -> int:
    log = read_log(args.log)
    if args.question is None:  # what can be replayed
        for key, qid in finished_units(log):
            unit = read_unit(log, qid, key)
            print(f"{qid}  --condition {key}  {unit.setting}: {unit.verdict()}")
        return 0
    unit = read_unit(log, args.question, args.condition)
    config = unit.config
    printer = (
        _JsonPrinter(args.deltas) if args.json else _TextPrinter(config, colour=_use_colour(args))
    )
    if not args.json:
        print(f"recorded: {unit.provenance()}", file=sys.stderr)
    shown = Fold()
    for event in replay(unit, max(args.seconds, 0.0)):
        shown.apply(event)
        printer(event)
    if "RRMaj" in shown.methods:
        if args.json:
            print(json.dumps(shown.speakers.to_dict(), ensure_ascii=False), flush=True)
        else:
            print(speaker_summary(shown.speakers, config))
    return 0
