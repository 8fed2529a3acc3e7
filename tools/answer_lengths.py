"""How long a model's uncorrupted answers are, per task: the measurement behind a model's L.

Runs MAJ only at 0cNt (every agent honest) on the first questions of each task's seeded sample,
with a generous L, and prints per task the answer lengths (median, 90th percentile, max), the
share cut at that L, and the share that would be cut at each candidate L. Also writes the lengths
as JSON for the record.

    .venv/bin/python -m tools.answer_lengths --model qwen2.5-coder-1.5b \\
        --tasks logic3,gsm8k,aqua --questions 3 --max-tokens 1024 --out lengths.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from rrdemo.backends.choice import with_backends
from rrdemo.backends.pool import ModelPool
from rrdemo.defaults import INTERACTIVE_DEFAULTS
from rrdemo.events import AnswerExtracted
from rrdemo.protocols import run_question
from rrdemo.seats import homogeneous_agents
from rrdemo.tasks import get_task, load_questions

CANDIDATES = (256, 384, 512, 768, 1024)


def measure(model: str, task_name: str, questions: int, max_tokens: int, agents: int, pool):
    task = get_task(task_name)
    config = INTERACTIVE_DEFAULTS.run_config(
        homogeneous_agents(model, agents, 0), max_tokens=max_tokens, prompt_style="step-by-step"
    )
    config = with_backends(config)
    rows = []
    for question in load_questions(task, n=questions, seed=config.sampling.seed):
        for event in run_question(config, question, task, pool, methods=("MAJ",)):
            if isinstance(event, AnswerExtracted):
                rows.append(
                    {
                        "question": question.qid,
                        "tokens": event.n_tokens,
                        "finish": event.finish_reason,
                        "correct": event.correct,
                    }
                )
    return rows


def summary(task: str, rows: list[dict], max_tokens: int) -> str:
    lengths = sorted(r["tokens"] for r in rows)
    p90 = lengths[min(len(lengths) - 1, int(0.9 * len(lengths)))]
    cut = sum(r["finish"] == "length" for r in rows)
    right = sum(bool(r["correct"]) for r in rows)
    would = ", ".join(
        f"L={c}: {100 * sum(n >= c for n in lengths) / len(lengths):.0f}%"
        for c in CANDIDATES
        if c <= max_tokens
    )
    return (
        f"{task}: {len(rows)} answers, median {statistics.median(lengths):.0f}, p90 {p90}, "
        f"max {lengths[-1]} tokens; cut at L={max_tokens}: {cut}; correct {right}; "
        f"share at or over: {would}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--tasks", default="logic3,gsm8k,aqua")
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--agents", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    pool = ModelPool(preferred_backend="auto")
    found = {}
    for task in args.tasks.split(","):
        start = time.perf_counter()
        rows = measure(args.model, task, args.questions, args.max_tokens, args.agents, pool)
        found[task] = rows
        print(summary(task, rows, args.max_tokens), f"({time.perf_counter() - start:.0f} s)")
    if args.out:
        args.out.write_text(json.dumps({"model": args.model, "lengths": found}, indent=1))


if __name__ == "__main__":
    main()
