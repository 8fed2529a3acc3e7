"""The Arena's wait on each offline model: load, time to the first chunk, and the whole run.

    python -m bench.interactive                      # what `make bench` runs
    python -m bench.interactive --models qwen2.5-coder-1.5b --questions 3

Per model, in one process, on llama.cpp, with the Arena's settings for that model (its K, L and
prompt style: `INTERACTIVE_DEFAULTS.for_models`, 3c2t strong, N = M = 5, end-of-sequence allowed),
MAJ and RRMaj interleaved as the Arena runs them:

1. **load**: seconds until the model answers (file to weights, context created);
2. **new question** (`--questions` of them, the benchmark's questions 1, 2, ...): seconds from
   pressing Run (the run's first event, after the load) to the first streamed text of MAJ and
   of RRMaj, and to the end of the whole run; every prompt is read for the first time;
3. **asked again**: the same questions once more, as a visitor pressing Run again or opening a
   preset does: the agents' prompts come from the cached heads (rrdemo.backends.llamacpp);
   nothing else is reused, so the text is the same as in 2 (checked) and only the prompts'
   prefill is saved.

Target (issue 27): first text within 1.5 s of pressing Run. Writes bench/interactive.json and
the "Interactive" section of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from bench.backends import _One, load, machine
from bench.report import write_readme
from rrdemo.errors import RRError

HERE = Path(__file__).resolve().parent
MODELS = ("smollm2", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
START, END = "<!-- bench:interactive:start -->", "<!-- bench:interactive:end -->"
TARGET_S = 1.5


def arena_run(model: str, index: int, max_tokens: int | None):
    """(config, question, task, target) as the Arena prepares question `index` for `model`."""
    from rrdemo.defaults import INTERACTIVE_DEFAULTS
    from ui.state import ArenaRequest, build_run

    own = INTERACTIVE_DEFAULTS.for_models([model], "logic3")
    request = ArenaRequest(
        model=model,
        question_index=index,
        k=own.k,
        max_tokens=max_tokens or own.max_tokens,
        prompt_style=own.prompt_style,
    )
    prepared = build_run(request)
    return prepared.config, prepared.question, prepared.task, prepared.target


def timed_run(backend, config, question, task, target) -> dict:
    """Seconds from the run's first event to the first text of each method and to the end."""
    from rrdemo.protocols import run_question

    marks: dict = {}
    texts = []
    start = None
    for event in run_question(
        config, question, task, _One(backend), target=target, interleave=True
    ):
        now = time.perf_counter()
        start = start if start is not None else now
        if event.kind in ("token_delta", "chunk_written"):
            marks.setdefault(f"first_{event.method}", round(now - start, 3))
        if event.kind == "chunk_written":
            texts.append(event.text)
        if event.kind == "compute_used":
            marks[f"prefill_{event.method}"] = event.prefill_tokens
            marks[f"decode_{event.method}"] = event.decode_tokens
    marks["first"] = min(marks.get("first_MAJ", 1e9), marks.get("first_RRMaj", 1e9))
    marks["total"] = round(time.perf_counter() - start, 3)
    marks["text"] = texts
    return marks


def measure(model: str, opts, log) -> dict:
    log(f"loading {model} on llama.cpp ...")
    backend, load_s = load("llamacpp", model)
    config, *rest = arena_run(model, 0, None)
    timed_run(backend, config.with_(max_tokens=config.k), *rest)  # untimed: buffers, first calls
    out: dict = {"load_s": load_s, "new": [], "again": []}
    runs = [arena_run(model, i + 1, opts.max_tokens) for i in range(opts.questions)]
    out["k"], out["max_tokens"] = runs[0][0].k, runs[0][0].max_tokens
    out["prompt_style"] = runs[0][0].prompt_style
    for phase in ("new", "again"):
        for config, question, task, target in runs:
            marks = timed_run(backend, config, question, task, target)
            log(
                f"{model} {phase} {question.qid}: first text {marks['first']} s, run {marks['total']} s"
            )
            out[phase].append(marks)
    out["same_text"] = all(
        a["text"] == b["text"] for a, b in zip(out["new"], out["again"], strict=True)
    )
    for phase in ("new", "again"):
        for key in ("first", "first_MAJ", "first_RRMaj", "total", "prefill_MAJ", "prefill_RRMaj"):
            out[f"{phase}_{key}"] = round(statistics.median(m[key] for m in out[phase]), 3)
        for marks in out[phase]:
            marks.pop("text")
    backend.close()
    return out


def render(results: dict) -> str:
    m = results["machine"]
    lines = [
        f"Machine: {m['cpu']}, {m['cores']} cores, llama-cpp-python {m.get('llama_cpp', '?')} "
        f"({m['llama_threads']} threads); load average {m['load_average_start']} at start. "
        f"Medians over {results['questions']} Logic3 questions (1 to {results['questions']}), "
        "3c2t strong, N = M = 5, MAJ and RRMaj interleaved as in the Arena, end-of-sequence "
        "allowed; seconds from pressing Run (model loaded).",
        "",
        "| model | K | L | load, s | first text, new question | first text, asked again | "
        "whole run, new | whole run, again | prompt prefill tokens MAJ: new / again | "
        "same text |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in results["models"].items():
        ok = lambda s: f"**{s}**" if s <= TARGET_S else str(s)  # noqa: E731
        lines.append(
            f"| {name} | {r['k']} | {r['max_tokens']} | {r['load_s']} | {ok(r['new_first'])} | "
            f"{ok(r['again_first'])} | {r['new_total']} | {r['again_total']} | "
            f"{r['new_prefill_MAJ']} / {r['again_prefill_MAJ']} | {r['same_text']} |"
        )
    lines += ["", f"Bold: within the {TARGET_S} s target."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.interactive", description=__doc__.split("\n")[0]
    )
    p.add_argument("--models", default=",".join(MODELS), help="registry names, comma-separated")
    p.add_argument(
        "--questions",
        type=int,
        default=1,
        help="questions timed per phase (at most 4: the heads of 4 runs stay cached)",
    )
    p.add_argument(
        "--max-tokens", type=int, default=None, help="L (default: the Arena's for the model)"
    )
    p.add_argument("--out", type=Path, default=HERE / "interactive.json")
    p.add_argument("--readme", type=Path, default=HERE / "README.md")
    opts = p.parse_args(argv)
    if not 1 <= opts.questions <= 4 or (opts.max_tokens is not None and opts.max_tokens < 8):
        print("error: --questions must be 1 to 4 and --max-tokens at least 8", file=sys.stderr)
        return 2
    results: dict = {"machine": machine(), "questions": opts.questions, "models": {}}
    try:
        for model in (m for m in opts.models.split(",") if m):
            results["models"][model] = measure(model, opts, print)
    except RRError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    opts.out.write_text(json.dumps(results, indent=2) + "\n")
    write_readme(opts.readme, render(results), START, END, "Interactive: the Arena's wait")
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
