"""Decoding throughput of the installed llama.cpp build on the 1.5B, by batch size: R answers of
one step-by-step arith prompt decoded together (their prompt prefilled once and shared, so the
time is decoding), L tokens each, sampled at 0.7 with a seed per answer. `bench/native_build.sh`
runs it under the portable and the native build; alone:

    RRDEMO_LLAMA_THREADS=1 taskset -c 0 python -m bench.decode_rows [--rows 16,4] [--tokens 64]
"""

from __future__ import annotations

import argparse
import time


def build_name() -> str:
    """Which llama.cpp build this process loaded, from its own feature list."""
    import llama_cpp

    features = llama_cpp.llama_print_system_info().decode()
    return "native (AVX-512)" if "AVX512 = 1" in features else "portable"


def decode_rows(rows: list[int], tokens: int, model: str = "qwen2.5-coder-1.5b") -> list[dict]:
    """Per batch size: seconds, tokens decoded and tokens a second."""
    from rrdemo.backends.base import Finished, GenerationRequest
    from rrdemo.backends.pool import ModelPool
    from rrdemo.config import Sampling

    backend = ModelPool().get(model, None, "llamacpp")
    prompt = backend.render_prompt(
        "Start with 18. Multiply by 3, then subtract 7. What number do you end with? "
        "Options: (A) 47 (B) 54 (C) 45 (D) 51 (E) 44. Let's think step by step: work the "
        "problem out first, showing each step."
    )
    list(backend.generate([GenerationRequest(("warm",), prompt, 1, Sampling(0.0), 0)]))
    found = []
    for n in rows:
        requests = [
            GenerationRequest(("rows", n, i), prompt, tokens, Sampling(0.7, seed=i), i)
            for i in range(n)
        ]
        start = time.perf_counter()
        done = [o for o in backend.generate(requests) if isinstance(o, Finished)]
        seconds = time.perf_counter() - start
        decoded = sum(o.n_tokens for o in done)
        found.append({"rows": n, "seconds": seconds, "tokens": decoded, "tok_s": decoded / seconds})
        backend.release()
    backend.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="16,4", help="batch sizes, comma-separated")
    parser.add_argument("--tokens", type=int, default=64, help="tokens per answer")
    args = parser.parse_args()
    name = build_name()
    for r in decode_rows([int(n) for n in args.rows.split(",")], args.tokens):
        print(
            f"{name:17} rows={r['rows']:3d} {r['seconds']:7.1f} s {r['tokens']:5d} tokens "
            f"{r['tok_s']:6.2f} tok/s",
            flush=True,
        )


if __name__ == "__main__":
    main()
