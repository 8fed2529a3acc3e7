"""What the checks before sympy cost an ordinary answer: microseconds per call, side by side.

The MATH-500 gold answers (the vote key's inputs) and the committed calibration logs' MATH-500
model texts (the extractor's inputs) are read three ways, each with math-verify's caches cleared
first: the cheap checks alone (`rrdemo.tasks.mathguard.classify`), the reading
without them (`_vote_key`, `read_math`: what ran before), and the bounded entry points
(`math_vote_key`, `extract_math`: checks, then here or in the worker). Also counted: how many
inputs the checks send to the worker, and one worker round trip. Prints a table and writes
bench/answer_guard.json.

    .venv/bin/python -m bench.answer_guard
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOGS = ("qwen05b.jsonl", "qwen15b.jsonl")


def _texts(limit: int) -> list[tuple[str, str | None]]:
    """(text, finish reason) of the calibration logs' MATH-500 answers."""
    texts = []
    for name in LOGS:
        for line in (ROOT / "assets" / "calibration" / name).open(encoding="utf-8"):
            record = json.loads(line)
            if record.get("type") == "answer" and record.get("task") == "math500":
                texts.append((record["text"], record.get("finish_reason")))
    return texts[:limit]


def _golds(limit: int) -> list[str]:
    from rrdemo.tasks import get_task, load_questions
    from rrdemo.tasks.mathanswers import normalize_latex

    questions = load_questions(get_task("math500"), source="offline")
    return [normalize_latex(q.gold) or q.gold for q in questions if q.gold][:limit]


def _per_call(fn: Callable, inputs: Sequence[tuple]) -> float:
    """Seconds per call of `fn` over `inputs`, our and sympy's caches cleared first (the
    answer worker keeps its own: a worker call after the first pass reads warm caches)."""
    from sympy.core.cache import clear_cache

    from rrdemo.tasks import mathanswers

    mathanswers.parse_latex.cache_clear()
    mathanswers._in_worker.cache_clear()
    clear_cache()
    start = time.perf_counter()
    for args in inputs:
        fn(*args)
    return (time.perf_counter() - start) / len(inputs)


def _guard(text: str, answer: bool) -> bool:
    from rrdemo.tasks import mathguard

    reason, plain = mathguard.classify(text, answer)
    return reason is None and plain


def measure(answers: int, texts: int) -> dict:
    from rrdemo.tasks import mathanswers
    from rrdemo.tasks.mathanswers import _PRELOAD, MATH_LIMITS
    from rrdemo.worker import WorkerPool

    golds = [(g,) for g in _golds(answers)]
    written = _texts(texts)
    mathanswers._vote_key("1")  # imports sympy and math-verify before any timing
    mathanswers.math_vote_key("\\sum_{i=1}^{2} i")  # not plain: the answer worker is started
    rows = {}
    for name, unguarded, bounded, inputs, answer in (
        (
            "vote key (MATH-500 golds)",
            mathanswers._vote_key,
            mathanswers.math_vote_key,
            golds,
            True,
        ),
        ("extract (model texts)", mathanswers.read_math, mathanswers.extract_math, written, False),
    ):
        firsts = [(args[0], answer) for args in inputs]
        timed = {"guard": _guard, "unguarded": unguarded, "bounded": bounded}
        seconds: dict[str, list[float]] = {key: [] for key in timed}
        for _ in range(2):  # interleaved, cold caches each time: neither side goes first only
            for key, fn in timed.items():
                seconds[key].append(_per_call(fn, firsts if key == "guard" else inputs))
        rows[name] = {
            "inputs": len(inputs),
            "to_worker": sum(not _guard(*first) for first in firsts),
            "guard_us": min(seconds["guard"]) * 1e6,
            "unguarded_ms": min(seconds["unguarded"]) * 1e3,
            "bounded_ms": min(seconds["bounded"]) * 1e3,
        }
    pool = WorkerPool(_PRELOAD, MATH_LIMITS)
    try:
        pool.call(mathanswers._vote_key, "1")  # started
        round_trip = _per_call(lambda: pool.call(len, "x"), [()] * 200)
    finally:
        pool.close()
    return {"rows": rows, "worker_round_trip_ms": round_trip * 1e3}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=500, help="MATH-500 golds read")
    parser.add_argument("--texts", type=int, default=200, help="model texts read")
    parser.add_argument("--out", default=str(ROOT / "bench" / "answer_guard.json"))
    args = parser.parse_args(argv)
    result = measure(args.answers, args.texts)
    print(f"{'input':28} {'n':>4} {'worker':>6} {'checks us':>10} {'before ms':>10} {'now ms':>8}")
    for name, row in result["rows"].items():
        print(
            f"{name:28} {row['inputs']:>4} {row['to_worker']:>6} {row['guard_us']:>10.1f} "
            f"{row['unguarded_ms']:>10.2f} {row['bounded_ms']:>8.2f}"
        )
    print(f"one worker round trip: {result['worker_round_trip_ms']:.2f} ms")
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
