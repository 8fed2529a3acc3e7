"""Transformers vs llama.cpp, side by side in one process: MAJ, RRMaj and the Arena's default run.

    python -m bench.backends                       # what `make bench` runs after bench.cost (~9 min)
    python -m bench.backends --repeats 5           # more timed rounds (a quiet machine)
    python -m bench.backends --arena-questions 1   # the Arena on question 0 only (~6 min)

Setting: the Arena's defaults (`ui.state.ArenaRequest`: SmolLM2, N = 5, 3c2t strong, M = N,
temperature 0.7, seed 0, Logic3 question 0, shuffled speaking order). The equal-budget rows use
K = 50, L = 256 (L >= N x K: each trajectory has 6 turns and every agent writes); the Arena rows
run the Arena's own defaults unchanged (K = 4, L = 256, `INTERACTIVE_DEFAULTS`).

1. **MAJ and RRMaj at an equal decoding budget** on each engine: every answer and trajectory
   decodes exactly L tokens (`fixed_length`, bench/variants.py), so both decode N x L tokens. Wall time, decode
   tokens per second, prefill tokens; RRMaj / MAJ per engine (target on llama.cpp: <= 1.05).
2. **The Arena's default run end to end on question 0**: MAJ and RRMaj interleaved as the Arena
   streams them, end-of-sequence allowed, on each engine (target: llama.cpp at least 3x faster).
3. **The same run on Logic3 questions 0 to Q - 1** (`--arena-questions Q`, default 5), each
   picked as the Arena picks it (`ArenaRequest(question_index=i)`): summed wall time and summed
   decode / prefill tokens per round, and each question's wall. The engines sample different
   texts (their logits differ in the last bits), so with end-of-sequence allowed one question
   can decode very different amounts on the two engines; Q questions average over that, and
   the speedup per decoded token ((wall / decode tokens) of transformers over that of
   llama.cpp, on the Q-question sums) compares the engines on equal work.
Each round runs MAJ and RRMaj at the equal budget on both engines, then the question-0 Arena
run on both, then the Q Arena runs on both (each engine its Q questions in a row); the engine
order alternates between rounds, and so does the method order (MAJ, RRMaj / RRMaj, MAJ). One
untimed warm-up per engine before the first round; medians over `--repeats` rounds. Model
load times are reported apart (first load of a transformers model converts the GGUF once; later
loads read the converted copy). Writes bench/backends_results.json and the "Backends" table of
bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

from bench.ratios import at_least, at_most, ratio
from bench.report import write_readme
from rrdemo.errors import RRError
from rrdemo.events import METHODS

START, END = "<!-- bench:backends:start -->", "<!-- bench:backends:end -->"
SECTION = "Backends: transformers vs llama.cpp (`make bench`)"  # its README section
ENGINES = ("transformers", "llamacpp")


def arena_setting(k: int, max_tokens: int):
    """The Arena's default request with the every-agent-speaks order: (config, question, task)."""
    from ui.state import ArenaRequest, build_run  # no gradio in ui.state

    prepared = build_run(ArenaRequest(k=k, max_tokens=max_tokens))
    return prepared.config.with_(order="shuffled"), prepared.question, prepared.task


def build_arena_config(model: str):
    """The Arena's default run exactly as a visitor starts it (only the model may differ)."""
    from ui.state import ArenaRequest, build_run  # no gradio in ui.state

    return build_run(ArenaRequest(model=model)).config


def arena_questions(model: str, count: int) -> list[tuple]:
    """The Arena's default run on its questions 0 to count - 1, each picked as the Arena picks it:
    (config, question, task) per question. Raises RRError for a question that does not exist."""
    from ui.state import ArenaRequest, build_run  # no gradio in ui.state

    prepared = [build_run(ArenaRequest(model=model, question_index=i)) for i in range(count)]
    return [(p.config, p.question, p.task) for p in prepared]


class _One:
    """A model source handing one backend to every agent."""

    def __init__(self, backend) -> None:
        self.backend = backend

    def get(self, *_, **__):
        return self.backend


def load(engine: str, model: str):
    """(bench engine, seconds the engine took to load) for `engine`: the loaded model in its
    engine's bench class (bench/variants.py), which can decode a fixed length."""
    from bench.variants import twin
    from rrdemo.backends.loading import load_backend

    start = time.perf_counter()
    loaded = load_backend(model, backend=engine)
    seconds = round(time.perf_counter() - start, 2)
    backend = twin(loaded)
    if engine == "llamacpp":
        loaded.close()  # the twin reopened the file; one context is enough
    return backend, seconds


def run(backend, config, question, task, methods, interleave=False, budget=True) -> dict:
    """One run_question pass on a bench engine (`load`): wall time and the engine's own token
    counts. `budget`: every answer and trajectory decodes exactly L tokens (`fixed_length`)."""
    from rrdemo.protocols import run_question

    backend.fixed_length = budget
    start = time.perf_counter()
    decode = prefill = 0
    for event in run_question(
        config, question, task, _One(backend), methods=methods, interleave=interleave
    ):
        if event.kind == "compute_used":
            decode += event.decode_tokens
            prefill += event.prefill_tokens
    wall = time.perf_counter() - start
    return {"wall_s": round(wall, 3), "decode_tokens": decode, "prefill_tokens": prefill}


def _median(runs: list[dict], key: str) -> float:
    return round(statistics.median(r[key] for r in runs), 3)


def arena_pass(backend, questions: list[tuple]) -> list[dict]:
    """The Arena's run (MAJ and RRMaj interleaved, end-of-sequence allowed) on each question."""
    return [run(backend, c, q, t, METHODS, True, budget=False) for c, q, t in questions]


def summarize(runs: list[dict]) -> dict:
    wall = _median(runs, "wall_s")
    decode = runs[0]["decode_tokens"]
    return {
        "wall_s": wall,
        "wall_s_all": [r["wall_s"] for r in runs],
        "decode_tokens": decode,
        "prefill_tokens": runs[0]["prefill_tokens"],
        "decode_tokens_per_s": ratio(decode, wall, 1),
    }


def summarize_questions(rounds: list[list[dict]]) -> dict:
    """`summarize` over the rounds' sums across questions, plus each question's wall and tokens.
    Per question: the walls of the median round (the round whose sum is nearest the median, the
    first on a tie) and of every round; decode tokens of the first round (what `summarize` uses)."""
    sums = [
        {key: sum(o[key] for o in outs) for key in ("wall_s", "decode_tokens", "prefill_tokens")}
        for outs in rounds
    ]
    out = summarize([{**s, "wall_s": round(s["wall_s"], 3)} for s in sums])
    median = min(range(len(rounds)), key=lambda r: abs(sums[r]["wall_s"] - out["wall_s"]))
    out.update(
        questions=len(rounds[0]),
        decode_tokens_all=[s["decode_tokens"] for s in sums],
        median_round=median + 1,
        wall_s_per_question=[o["wall_s"] for o in rounds[median]],
        wall_s_per_question_all=[[o["wall_s"] for o in outs] for outs in rounds],
        decode_tokens_per_question=[o["decode_tokens"] for o in rounds[0]],
    )
    return out


def speedups(results: dict) -> dict:
    """llama.cpp over transformers, from `results["engines"]`: the Arena's run on question 0 and on
    the Q questions (ratios of median walls, end to end), the same per decoded token (wall / decode
    tokens on the Q-question sums), and MAJ + RRMaj at an equal budget."""
    t, ll = results["engines"]["transformers"], results["engines"]["llamacpp"]
    tq, lq = t["arena_questions"], ll["arena_questions"]
    per_token = ratio(
        ratio(tq["wall_s"], tq["decode_tokens"], 9), ratio(lq["wall_s"], lq["decode_tokens"], 9), 2
    )
    budget = ratio(
        t["maj"]["wall_s"] + t["rrmaj"]["wall_s"], ll["maj"]["wall_s"] + ll["rrmaj"]["wall_s"], 2
    )
    return {
        "arena_speedup_llamacpp_over_transformers": ratio(
            t["arena"]["wall_s"], ll["arena"]["wall_s"], 2
        ),
        "arena_questions_speedup": ratio(tq["wall_s"], lq["wall_s"], 2),
        "arena_per_token_speedup": per_token,
        "equal_budget_speedup_llamacpp_over_transformers": budget,
    }


def run_benchmark(opts: argparse.Namespace, log=print) -> dict:
    config, question, task = arena_setting(opts.k, opts.max_tokens)
    if opts.model != "smollm2":
        agents = tuple(replace(a, model=opts.model) for a in config.agents)
        config = config.with_(agents=agents)
    results: dict = {"settings": {}, "machine": machine(), "engines": {}}
    backends, loads = {}, {}
    for engine in ENGINES:
        log(f"loading {opts.model} on {engine} ...")
        backends[engine], loads[engine] = load(engine, opts.model)
        warm = config.with_(k=4, max_tokens=8)
        run(backends[engine], warm, question, task, METHODS)  # untimed warm-up
    arena_config = build_arena_config(opts.model)
    questions = arena_questions(opts.model, opts.arena_questions)
    timed: dict = {e: {"MAJ": [], "RRMaj": [], "arena": [], "questions": []} for e in ENGINES}
    for r in range(opts.repeats):
        engines = ENGINES if r % 2 == 0 else ENGINES[::-1]
        for engine in engines:
            for method in METHODS if r % 2 == 0 else METHODS[::-1]:
                out = run(backends[engine], config, question, task, (method,))
                timed[engine][method].append(out)
                log(f"round {r + 1} {engine:12s} {method:5s} {out['wall_s']:7.2f} s")
        for engine in engines:
            out = run(backends[engine], arena_config, question, task, METHODS, True, budget=False)
            timed[engine]["arena"].append(out)
            log(f"round {r + 1} {engine:12s} arena {out['wall_s']:7.2f} s")
        for engine in engines:
            outs = arena_pass(backends[engine], questions)
            timed[engine]["questions"].append(outs)
            walls = sum(o["wall_s"] for o in outs)
            log(f"round {r + 1} {engine:12s} arena, {len(outs)} questions {walls:7.2f} s")
    for engine in ENGINES:
        maj, rr = summarize(timed[engine]["MAJ"]), summarize(timed[engine]["RRMaj"])
        pairs = [
            ratio(b["wall_s"], a["wall_s"])
            for a, b in zip(timed[engine]["MAJ"], timed[engine]["RRMaj"], strict=True)
        ]
        defined = [p for p in pairs if p is not None]
        results["engines"][engine] = {
            "load_s": loads[engine],
            "maj": maj,
            "rrmaj": rr,
            "rrmaj_over_maj": round(statistics.median(defined), 3) if defined else None,
            "rrmaj_over_maj_all": pairs,
            "arena": summarize(timed[engine]["arena"]),
            "arena_questions": summarize_questions(timed[engine]["questions"]),
        }
    c = results["comparison"] = speedups(results)
    results["targets"] = {
        "arena_speedup_at_least_3": at_least(c["arena_speedup_llamacpp_over_transformers"], 3),
        "arena_questions_speedup_at_least_3": at_least(c["arena_questions_speedup"], 3),
        "llamacpp_rrmaj_over_maj_at_most_1.05": at_most(
            results["engines"]["llamacpp"]["rrmaj_over_maj"], 1.05
        ),
    }
    results["settings"] = {
        "model": opts.model,
        "label": config.label,
        "strength": config.strength,
        "n": config.n,
        "m": config.resolved_m,
        "k": config.k,
        "max_tokens": config.max_tokens,
        "order": config.order,
        "temperature": config.sampling.temperature,
        "seed": config.sampling.seed,
        "task": task.name,
        "question": question.qid,
        "repeats": opts.repeats,
        "arena_k": arena_config.k,
        "arena_max_tokens": arena_config.max_tokens,
        "arena_questions": opts.arena_questions,
        "arena_question_ids": [q.qid for _, q, _ in questions],
    }
    results["machine"]["load_average_end"] = _load()
    return results


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def machine() -> dict:
    import torch

    from rrdemo.backends.hardware import cpu_name

    info = {
        "cpu": cpu_name(),
        "cores": len(os.sched_getaffinity(0)),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "llama_threads": int(
            os.environ.get("RRDEMO_LLAMA_THREADS") or len(os.sched_getaffinity(0))
        ),
        "load_average_start": _load(),
    }
    try:
        import llama_cpp

        info["llama_cpp"] = llama_cpp.__version__
    except ImportError:
        info["llama_cpp"] = None
    return info


def _questions(count: int) -> str:
    return "question 0" if count == 1 else f"questions 0-{count - 1}"


def render_table(results: dict) -> str:
    s, m, c = results["settings"], results["machine"], results["comparison"]
    engines = results["engines"]
    q = s["arena_questions"]
    rows = [
        f"Machine: {m['cpu']}, {m['cores']} cores, torch {m['torch']} ({m['torch_threads']} "
        f"threads), llama-cpp-python {m['llama_cpp']} ({m['llama_threads']} threads); load average {m['load_average_start']} at "
        f"start, {m['load_average_end']} at end.",
        f"Setting: {s['model']}, {s['label']} {s['strength']}, N={s['n']}, M={s['m']}, "
        f"{s['order']} order, temperature {s['temperature']}, seed {s['seed']}, {s['task']} "
        f"question {s['question']}; MAJ and RRMaj columns K={s['k']}, L={s['max_tokens']}; Arena "
        f"runs the Arena's defaults (K={s['arena_k']}, L={s['arena_max_tokens']}) on question 0 "
        f"and, summed, on {s['task']} {_questions(q)}; medians of {s['repeats']} alternating "
        "rounds.",
        "",
        "| engine | load, s | MAJ wall, s | RRMaj wall, s | RRMaj / MAJ | MAJ tok/s | RRMaj tok/s "
        f"| RRMaj prefill tokens | Arena, question 0: s | tok/s | Arena, {q} questions: s | tok/s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for engine, e in engines.items():
        rows.append(
            f"| {engine} | {e['load_s']} | {e['maj']['wall_s']} | {e['rrmaj']['wall_s']} | "
            f"{e['rrmaj_over_maj']} | {e['maj']['decode_tokens_per_s']} | "
            f"{e['rrmaj']['decode_tokens_per_s']} | {e['rrmaj']['prefill_tokens']} | "
            f"{e['arena']['wall_s']} | {e['arena']['decode_tokens_per_s']} | "
            f"{e['arena_questions']['wall_s']} | {e['arena_questions']['decode_tokens_per_s']} |"
        )
    t, ll = engines["transformers"], engines["llamacpp"]
    rows += [
        "",
        "llama.cpp over transformers, the Arena's default run (target: at least 3x faster end "
        f"to end): **{c['arena_speedup_llamacpp_over_transformers']}x** end to end on question 0, "
        f"**{c['arena_questions_speedup']}x** end to end on {_questions(q)} (summed walls), "
        f"**{c['arena_per_token_speedup']}x** per decoded token. The two engines sample different "
        "texts (their logits differ in the last bits) and the Arena run stops at end-of-sequence, "
        "so they decode different amounts: question 0 decoded "
        f"{t['arena']['decode_tokens']} tokens on transformers and {ll['arena']['decode_tokens']} "
        f"on llama.cpp, the {q} questions {t['arena_questions']['decode_tokens']} and "
        f"{ll['arena_questions']['decode_tokens']}. So one question compares different amounts "
        f"of decoding; the {q}-question ratio is the wait over several questions, where the "
        "lengths tend to even out; the per-token ratio ((wall / decode tokens) of transformers "
        f"over that of llama.cpp, on the {q}-question sums) compares the engines on equal decoding "
        "work, prefill and per-turn costs charged to the decoded tokens. MAJ + RRMaj at an equal "
        f"budget: {c['equal_budget_speedup_llamacpp_over_transformers']}x (MAJ and RRMaj columns "
        "decode exactly L tokens per answer/trajectory).",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.backends", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--model", default="smollm2", help="an offline GGUF model (default smollm2)"
    )
    parser.add_argument("--k", type=int, default=50, help="K (default 50)")
    parser.add_argument("--max-tokens", type=int, default=256, help="L (default 256 >= N x K)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed rounds (default 3: ~9 min on 2 cores)"
    )
    parser.add_argument(
        "--arena-questions",
        type=int,
        metavar="Q",
        default=5,
        help="the Arena's default run is also timed on Logic3 questions 0 to Q - 1, summed "
        "(default 5; it costs about 65 s per round on 2 cores, 3.5 min of the default run's ~9 min; "
        "1 brings the run to ~6 min)",
    )
    parser.add_argument(
        "--threads", type=int, help="CPU threads of both engines (default: all cores)"
    )
    parser.add_argument("--out", default="bench/backends_results.json")
    parser.add_argument("--readme", default="bench/README.md")
    opts = parser.parse_args(argv)
    if opts.repeats < 1 or opts.k < 1 or opts.max_tokens < opts.k:
        print(
            "error: --repeats and --k must be at least 1, and --max-tokens at least --k",
            file=sys.stderr,
        )
        return 2
    if opts.arena_questions < 1:
        print("error: --arena-questions must be at least 1", file=sys.stderr)
        return 2
    try:
        arena_questions(opts.model, opts.arena_questions)  # every question exists
    except RRError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    from rrdemo.backends.llamacpp_native import available

    if available() is not None:
        print(
            f"error: llama-cpp-python is not importable ({available()}); run `make llama`",
            file=sys.stderr,
        )
        return 2
    if opts.threads:  # torch now; llama.cpp reads the variable when its model loads
        import torch

        torch.set_num_threads(opts.threads)
        os.environ["RRDEMO_LLAMA_THREADS"] = str(opts.threads)
    results = run_benchmark(opts)
    Path(opts.out).write_text(json.dumps(results, indent=2) + "\n")
    write_readme(Path(opts.readme), render_table(results), START, END, SECTION)
    print(render_table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
