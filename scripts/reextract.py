"""Re-extract the answers of an experiment log with the current rules and say what changed.

    python scripts/reextract.py assets/experiment_small.jsonl

Each trajectory record holds its chunks, its finish reason and the answer extracted when it was
logged. This reads every finished trajectory again with `task.extract(text, finish_reason)` and
prints, per task and method and in total: how many answers changed (and how: answer -> none,
none -> answer, answer -> other answer; and how many change with the statement/echo rules alone,
reading every text as complete), and trajectory accuracy and fooled rate with the logged and the
new answers. Nothing is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout

from rrdemo.tasks import get_task


def reextract(path: Path) -> dict[tuple[str, str], Counter]:
    """Tallies per (task, method): n, changed, kinds of change, correct before and after."""
    tallies: dict[tuple[str, str], Counter] = defaultdict(Counter)
    tasks: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["type"] == "header":
            tasks = {c["key"]: c["task"] for c in record["conditions"]}
        if record["type"] != "trajectory":
            continue
        task = get_task(tasks[record["condition"]])
        text = "".join(chunk["text"] for chunk in record["chunks"])
        old = record["answer"]
        new = task.extract(text, finish_reason=record["finish_reason"])
        tally = tallies[(task.name, record["method"])]
        tally["n"] += 1
        tally["old_correct"] += task.is_correct(old, record["gold"])
        tally["new_correct"] += task.is_correct(new, record["gold"])
        tally["old_none"] += old is None
        tally["new_none"] += new is None
        tally["cut_off"] += record["finish_reason"] == "length"
        target = record.get("target")
        for name, answer in (("old", old), ("new", new)):
            tally[f"{name}_fooled"] += bool(
                target and answer is not None and task.vote_key(answer) == task.vote_key(target)
            )
        # the statement / echo rules alone, as if no text had been cut off
        tally["changed_without_cut_rule"] += task.extract(text) != old
        if (old is None) != (new is None) or (old is not None and new != old):
            tally["changed"] += 1
            kind = "answer->none" if new is None else "none->answer" if old is None else "other"
            tally[kind] += 1
    return tallies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    args = parser.parse_args(argv)
    tallies = reextract(args.log)
    total: Counter = Counter()
    print(
        "| task | method | n | cut off at L | changed | answer->none | none->answer | other |"
        " changed by the statement/echo rules alone | no answer (old -> new) |"
        " accuracy (old -> new) | fooled (old -> new) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (task, method), t in sorted(tallies.items()) + [(("all", ""), total)]:
        if task != "all":
            total.update(t)
        print(
            f"| {task} | {method} | {t['n']} | {t['cut_off']} | {t['changed']} "
            f"({t['changed'] / t['n']:.1%}) | {t['answer->none']} | {t['none->answer']} | "
            f"{t['other']} | {t['changed_without_cut_rule']} | {t['old_none']} -> {t['new_none']} | "
            f"{t['old_correct'] / t['n']:.1%} -> {t['new_correct'] / t['n']:.1%} | "
            f"{t['old_fooled'] / t['n']:.1%} -> {t['new_fooled'] / t['n']:.1%} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
