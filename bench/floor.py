"""RRMaj against its exact-computation floor, and decode speed against llama.cpp's own loop.

    python -m bench.floor                  # what `make bench` runs: SmolLM2, Qwen 0.5B, Qwen 1.5B
    python -m bench.floor --models qwen2.5-coder-0.5b --engines llamacpp,transformers

Per model and engine, in one process, alternating rounds after an untimed warm-up:

1. **MAJ and RRMaj at an equal decoding budget** (end-of-sequence suppressed: both decode
   N x L tokens): 3c2t strong, N = M = 5, seeded shuffled order, the model's own K and prompt
   style (`MODEL_DEFAULTS`: Qwen reasons step by step with K = 16), L = 256, Logic3 question 0.
2. **The floor**: RRMaj must do all that MAJ does plus read what the other agents wrote, i.e.
   its extra prefill tokens. Each round calibrates the cost of a prefill token at the shape the
   engine runs a turn in (M rows of S new tokens each, one call; S = RRMaj's extra prefill tokens
   per row and turn) and sets floor = MAJ wall + extra prefill tokens x that cost. RRMaj / floor
   is then what the engine adds beyond the arithmetic (target: at most 1.05).
3. **Decode throughput** (llama.cpp only): N rows of the question's prompt decoding L tokens,
   greedy, the engine against a plain loop over llama.cpp's C API on the same file and batch,
   once with llama.cpp's defaults (flash attention when it likes, one KV pool) and once
   with the engine's context settings; prefill left out of all three (target: engine at least
   0.9 x the defaults).

Medians over `--repeats` rounds, each ratio taken within its round. Writes bench/floor.json and
the "Floor" section of bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

from bench.backends import load, machine, run
from bench.report import write_readme
from rrdemo.errors import RRError
from rrdemo.events import METHODS

HERE = Path(__file__).resolve().parent
MODELS = ("smollm2", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b")
START, END = "<!-- bench:floor:start -->", "<!-- bench:floor:end -->"
# What the timings read: wall seconds (a quiet machine), or this process's CPU seconds
# (`--clock cpu`: a shared machine, with one llama.cpp thread, which computes in this thread).
CLOCK = [time.perf_counter]
FILLER = " the cat sat on a warm mat near the door and looked at the rain outside"


def setting(model: str, max_tokens: int):
    """(config, question, task): the equal-budget run of `model` with its own defaults."""
    from rrdemo.config import RunConfig, Sampling
    from rrdemo.defaults import MODEL_DEFAULTS
    from rrdemo.seats import homogeneous_agents
    from ui.state import ArenaRequest, build_run

    prepared = build_run(ArenaRequest(model=model, question_index=0))
    own = MODEL_DEFAULTS.get(model)
    config = RunConfig(
        agents=homogeneous_agents(model, 5, 3),
        strength="strong",
        k=own.k if own and own.k else min(50, max_tokens // 5),
        max_tokens=max_tokens,
        order="shuffled",
        prompt_style=own.prompt_style if own else "direct",
        sampling=Sampling(seed=0),
    )
    return config, prepared.question, prepared.task


def calibrate(backend, rows: int, suffix: int, round_: int, repeats: int = 3) -> float:
    """Seconds per prefill token when `rows` rows, each with its prompt cached, read `suffix`
    new tokens in one call and sample one token (a turn's prefill); the median of `repeats`
    calls, each reading other words after the same prompts."""
    from rrdemo.backends.base import Finished, GenerationRequest
    from rrdemo.config import Sampling

    greedy = Sampling(temperature=0.0)
    prompts = [backend.render_prompt(f"Story {round_}.{i}: write on.") for i in range(rows)]
    key = ("bench-floor", round_)

    def call(texts: list[str]) -> tuple[float, int]:
        requests = [
            GenerationRequest((*key, i), t, 1, greedy, 0, group=(*key, i))
            for i, t in enumerate(texts)
        ]
        start = CLOCK[0]()
        done = [o for o in backend.generate(requests) if isinstance(o, Finished)]
        return CLOCK[0]() - start, sum(o.prefill_tokens for o in done)

    call(prompts)
    costs = []
    for rep in range(repeats):
        words = FILLER.split()[rep:] + FILLER.split()[:rep]
        words = words * (suffix // len(words) + 2)
        n = 1
        while backend.count_tokens(" " + " ".join(words[:n])) < suffix and n < len(words):
            n += 1
        wall, tokens = call([f"{p} {' '.join(words[:n])}" for p in prompts])
        costs.append(wall / max(1, tokens))
    backend.release(key)
    return statistics.median(costs)


def reference_decode(backend, prompt_ids: list[int], rows: int, steps: int, defaults: bool):
    """Decode tokens per second of a plain C-API loop: `rows` sequences of `prompt_ids`, then
    `steps` greedy steps of all rows in one llama_decode each. `defaults`: llama.cpp's own
    settings on a second load of the file; otherwise the engine's context settings."""
    import llama_cpp.llama_cpp as ll
    import numpy as np

    from rrdemo.backends.llamacpp_native import Batch, create_context

    model = backend._model
    if defaults:
        model = ll.llama_model_load_from_file(
            str(backend.path).encode(), ll.llama_model_default_params()
        )
    n_ctx_seq = 256 * math.ceil((len(prompt_ids) + steps + 8) / 256)
    threads = ll.llama_n_threads(backend._ctx)
    if defaults:
        params = ll.llama_context_default_params()
        params.n_ctx, params.n_seq_max = n_ctx_seq * rows, rows
        params.n_batch = params.n_ubatch = 512
        params.n_threads = params.n_threads_batch = threads
        ctx = ll.llama_init_from_model(model, params)
    else:
        ctx = create_context(ll, model, backend.name, n_ctx_seq, rows, threads)
    batch = Batch(ll, max(512, len(prompt_ids)), 1)
    try:
        tokens = []
        for s in range(rows):
            batch.fill([(t, p, s, p == len(prompt_ids) - 1) for p, t in enumerate(prompt_ids)])
            ll.llama_decode(ctx, batch.raw)
            tokens.append(_argmax(ll, ctx, len(prompt_ids) - 1, backend.n_vocab, np))
        start = CLOCK[0]()
        for step in range(steps):
            batch.fill([(tokens[s], len(prompt_ids) + step, s, True) for s in range(rows)])
            if ll.llama_decode(ctx, batch.raw) != 0:
                raise RRError("the reference loop's llama_decode failed")
            tokens = [_argmax(ll, ctx, s, backend.n_vocab, np) for s in range(rows)]
        return rows * steps / (CLOCK[0]() - start)
    finally:
        batch.free()
        ll.llama_free(ctx)
        if defaults:
            ll.llama_model_free(model)


def _argmax(ll, ctx, i: int, n_vocab: int, np) -> int:
    return int(np.argmax(np.ctypeslib.as_array(ll.llama_get_logits_ith(ctx, i), (n_vocab,))))


def engine_decode(backend, prompt: str, rows: int, steps: int) -> float:
    """The engine's decode tokens per second on the same batch: N rows of `prompt`, greedy, each
    key's prompt cached first; timed as (time for steps + 1 tokens) - (time for 1 token), so
    what is left of the prefill (one token a row) cancels out."""
    from rrdemo.backends.base import Finished, GenerationRequest
    from rrdemo.config import Sampling

    def timed(n_new: int) -> float:
        requests = [
            GenerationRequest(("bench-tp", s), prompt, n_new, Sampling(0.0), s, group=s)
            for s in range(rows)
        ]
        start = CLOCK[0]()
        done = [o for o in backend.generate(requests) if isinstance(o, Finished)]
        wall = CLOCK[0]() - start
        assert all(o.decode_tokens == n_new for o in done), "the engine stopped early"
        return wall

    timed(1)  # caches each key's prompt
    try:
        return rows * steps / max(1e-9, timed(steps + 1) - timed(1))
    finally:
        backend.release(("bench-tp",))


def measure(engine: str, model: str, opts, log) -> dict:
    backend, load_s = load(engine, model)
    config, question, task = setting(model, opts.max_tokens)
    warm = config.with_(max_tokens=min(config.max_tokens, 2 * config.k))
    run(backend, warm, question, task, METHODS)  # untimed warm-up
    rounds = []
    for r in range(opts.repeats):
        order = METHODS if r % 2 == 0 else METHODS[::-1]
        out = {method: _timed(backend, config, question, task, method) for method in order}
        maj, rr = out["MAJ"], out["RRMaj"]
        extra = rr["prefill_tokens"] - maj["prefill_tokens"]
        turns = config.resolved_m * math.ceil(config.max_tokens / config.k)
        suffix = max(1, round(extra / turns))
        per_token = calibrate(backend, config.resolved_m, suffix, r)
        floor = maj["wall_s"] + extra * per_token
        rounds.append(
            {
                **out,
                "extra_prefill": extra,
                "suffix": suffix,
                "prefill_s": per_token,
                "floor_s": floor,
                "over_floor": rr["wall_s"] / floor,
                "over_maj": rr["wall_s"] / maj["wall_s"],
            }
        )
        log(
            f"{model} {engine} round {r + 1}: MAJ {maj['wall_s']:.1f} s, RRMaj {rr['wall_s']:.1f} "
            f"s, floor {floor:.1f} s (+{extra} prefill x {1e3 * per_token:.1f} ms)"
        )
    result = {"load_s": load_s, "rounds": rounds}
    for key in ("over_floor", "over_maj", "floor_s", "prefill_s"):
        result[key] = _spread([x[key] for x in rounds])
    for method in METHODS:
        result[method] = _spread([x[method]["wall_s"] for x in rounds])
        result[f"{method}_tok_s"] = round(
            rounds[0][method]["decode_tokens"] / result[method]["median"], 1
        )
    result["extra_prefill"] = rounds[0]["extra_prefill"]
    result["suffix"] = rounds[0]["suffix"]
    if engine == "llamacpp" and opts.throughput:
        prompt = backend.render_prompt(question.text)
        ids = backend.encode(prompt)
        ratios = []
        backend.fixed_length = True
        for r in range(opts.repeats):
            eng = engine_decode(backend, prompt, config.n, opts.steps)
            ref = reference_decode(backend, ids, config.n, opts.steps, defaults=True)
            same = reference_decode(backend, ids, config.n, opts.steps, defaults=False)
            ratios.append({"engine": eng, "reference": ref, "engine_settings": same})
            log(
                f"{model} decode tok/s round {r + 1}: engine {eng:.1f}, llama.cpp defaults "
                f"{ref:.1f}, engine settings {same:.1f}"
            )
        result["decode"] = {
            k: _spread([x[k] for x in ratios]) for k in ("engine", "reference", "engine_settings")
        }
        result["decode"]["over_reference"] = _spread([x["engine"] / x["reference"] for x in ratios])
    backend.close()
    result["setting"] = {
        "k": config.k,
        "max_tokens": config.max_tokens,
        "n": config.n,
        "m": config.resolved_m,
        "prompt_style": config.prompt_style,
        "task": task.name,
        "question": question.qid,
    }
    return result


def _timed(backend, config, question, task, method: str) -> dict:
    """`run` with its time read on `CLOCK` (as `wall_s`)."""
    start = CLOCK[0]()
    out = run(backend, config, question, task, (method,))
    return {**out, "wall_s": CLOCK[0]() - start}


def _spread(values: list[float]) -> dict:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "n": len(values),
    }


def render(results: dict) -> str:
    """One table per model: MAJ, RRMaj, the floor, the ratios, decode tok/s and the reference."""
    m = results["machine"]
    out = [
        f"Machine: {m['cpu']}, {m['cores']} cores, llama-cpp-python {m['llama_cpp']} "
        f"({m['llama_threads']} threads), torch {m['torch']} ({m['torch_threads']} threads); "
        f"load average {m['load_average_start']} at start; {results['clock']} seconds. Medians of {results['repeats']} "
        "rounds [min-max]; 3c2t strong, N = M = 5, shuffled order, seed 0, every answer and "
        "trajectory exactly L tokens.",
    ]
    for model, engines in results["models"].items():
        first = next(iter(engines.values()))["setting"]
        out += [
            "",
            f"**{model}** ({first['task']} {first['question']}, {first['prompt_style']}, "
            f"K = {first['k']}, L = {first['max_tokens']})",
            "",
            "| engine | load (wall), s | MAJ, s | RRMaj, s | floor, s | RRMaj / floor | RRMaj / MAJ "
            "| extra prefill tokens (per row and turn) | prefill, ms/token | MAJ tok/s "
            "| decode tok/s: engine / llama.cpp defaults / engine settings | engine / defaults |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for engine, e in engines.items():
            d = e.get("decode")
            decode = (
                f"{d['engine']['median']} / {d['reference']['median']} / "
                f"{d['engine_settings']['median']} | {_cell(d['over_reference'])}"
                if d
                else "- | -"
            )
            out.append(
                f"| {engine} | {e['load_s']} | {_cell(e['MAJ'])} | {_cell(e['RRMaj'])} | "
                f"{_cell(e['floor_s'])} | **{_cell(e['over_floor'])}** | {_cell(e['over_maj'])} | "
                f"{e['extra_prefill']} ({e['suffix']}) | {round(1e3 * e['prefill_s']['median'], 1)} "
                f"| {e['MAJ_tok_s']} | {decode} |"
            )
    return "\n".join(out)


def _cell(s: dict) -> str:
    return f"{s['median']} [{s['min']}-{s['max']}]"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__.split("\n")[0])
    p.add_argument("--models", default=",".join(MODELS), help="registry names, comma-separated")
    p.add_argument("--engines", default="llamacpp", help="llamacpp and/or transformers")
    p.add_argument("--max-tokens", type=int, default=256, help="L (default %(default)s)")
    p.add_argument("--repeats", type=int, default=3, help="timed rounds per model")
    p.add_argument(
        "--quick-models",
        default="qwen2.5-coder-1.5b",
        help="models timed in 2 rounds with L halved, to keep `make bench` near 20 minutes on "
        "2 cores (default %(default)s; '' for none)",
    )
    p.add_argument("--steps", type=int, default=64, help="decode steps of the throughput test")
    p.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall seconds, or CPU seconds of this process (a shared machine; needs "
        "RRDEMO_LLAMA_THREADS=1)",
    )
    p.add_argument("--no-throughput", dest="throughput", action="store_false")
    p.add_argument("--out", type=Path, default=HERE / "floor.json")
    p.add_argument("--readme", type=Path, default=HERE / "README.md")
    opts = p.parse_args(argv)
    if opts.repeats < 1 or opts.max_tokens < 16 or opts.steps < 1:
        print("error: --repeats and --steps must be at least 1, --max-tokens 16", file=sys.stderr)
        return 2
    CLOCK[0] = time.perf_counter if opts.clock == "wall" else time.process_time
    quick = {m for m in opts.quick_models.split(",") if m}
    results: dict = {"machine": machine(), "repeats": opts.repeats, "clock": opts.clock}
    results["models"] = {}
    try:
        for model in (m for m in opts.models.split(",") if m):
            one = argparse.Namespace(**vars(opts))
            if model in quick:
                one.repeats, one.max_tokens = min(2, opts.repeats), opts.max_tokens // 2
            results["models"][model] = {
                engine: measure(engine, model, one, print) for engine in opts.engines.split(",")
            }
    except RRError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    opts.out.write_text(json.dumps(results, indent=2) + "\n")
    write_readme(opts.readme, render(results), START, END, "Floor: RRMaj against exact computation")
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
