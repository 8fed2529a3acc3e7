"""How RRMaj / MAJ wall time moves with N, K and L, measured, next to a cost model that predicts it.

`python -m bench.scaling` runs, for each (N, K, L) point, MAJ and RRMaj alternating on the same
question (every agent speaks: seeded shuffled order, strong corruption with c = N // 2 + 1,
end-of-sequence suppressed so both decode N x L tokens), then measures this machine's two unit
costs once: seconds per decode step at batch B, and seconds per prefilled token. The cost model:

    MAJ   = P_maj x p + L x step(N)                 P_maj: tokens of the distinct prompts
    RRMaj = P_rr  x p + L x step(M) + turns x o     P_rr: prompts + what each prompt group has
                                                    not read of the others' text, about
                                                    (G - 1) x L per trajectory (G distinct
                                                    prompts among the writers, G <= N)
    RRMaj / MAJ ~= 1 + (P_rr - P_maj) x p / (P_maj x p + L x step(N))

With M = N the decode terms are equal; the gap is the extra prefill, priced at p per token, over
the decode time. On a GPU p is tiny next to a decode step and the ratio tends to 1; on a CPU a
prompt token costs a sizeable fraction of a batched decode step, so the ratio grows with G x L
over L x step / p. Plug in your own p and step(N) (the `units` printed) to predict your ratio.

    nice python -m bench.scaling                         # the default grid, ~10-15 min on 2 cores
    python -m bench.scaling --points 5:50:256,5:300:1024 --out /tmp/s.json

Writes bench/scaling.json, bench/scaling.html and (with kaleido) bench/scaling.png.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from bench.measure import agent_prompts, run_pass, speaker_stats
from bench.options import BenchOptions
from rrdemo.errors import RRError
from rrdemo.events import METHODS

HERE = Path(__file__).resolve().parent
# (N, K, L): N at K = 50, L = 256; K at N = 5, L = 256; L = 1024 with K = 100 and 300.
DEFAULT_POINTS = "3:50:256,5:50:256,7:50:256,5:10:256,5:100:256,5:100:1024,5:300:1024"


def parse_points(text: str) -> list[tuple[int, int, int]]:
    points = []
    for part in text.split(","):
        try:
            n, k, length = (int(x) for x in part.split(":"))
        except ValueError:
            raise RRError(f"a point is N:K:L with three integers, got {part!r}") from None
        if n < 2 or k < 1 or length < k:
            raise RRError(f"point {part!r}: need N >= 2, K >= 1 and L >= K")
        points.append((n, k, length))
    return points


def unit_costs(backend, prompt: str, batches: list[int], log) -> dict:
    """Seconds per prefilled token (one 200-token suffix after a cached prompt, batch 1) and
    seconds per decode step at each batch size (32 steps after a short prompt)."""
    import torch

    from rrdemo.backends.base import GenerationRequest
    from rrdemo.config import Sampling

    greedy = Sampling(temperature=0.0)
    words = " ".join(["the shared text grows as agents take turns"] * 25)

    def run(requests) -> float:
        start = time.perf_counter()
        for _ in backend.generate(requests):
            pass
        return time.perf_counter() - start

    with torch.inference_mode():
        run([GenerationRequest(("u", "w"), prompt, 2, greedy, 0)])  # warm-up
        backend.release(("u",))
        run([GenerationRequest(("u", 0), prompt, 1, greedy, 0)])  # the prompt is cached now
        extra = len(backend.encode(prompt + words)) - len(backend.encode(prompt))
        prefill = run([GenerationRequest(("u", 0), prompt + words, 1, greedy, 0)])
        backend.release(("u",))
        steps = {}
        for b in batches:
            reqs = [GenerationRequest(("u", i), prompt, 1, greedy, i) for i in range(b)]
            one = run(reqs)
            backend.release(("u",))
            reqs = [GenerationRequest(("u", i), prompt, 33, greedy, i) for i in range(b)]
            many = run(reqs)
            backend.release(("u",))
            steps[b] = round((many - one) / 32, 5)
    units = {"prefill_s_per_token": round(prefill / extra, 6), "decode_step_s": steps}
    log(f"unit costs: {units}")
    return units


def predict(point: dict, units: dict) -> float:
    """RRMaj / MAJ from the measured token counts and unit costs (formula in the module doc)."""
    p, step = units["prefill_s_per_token"], units["decode_step_s"][point["n"]]
    maj = point["maj_prefill"] * p + point["L"] * step
    return round(1 + (point["rr_prefill"] - point["maj_prefill"]) * p / maj, 3)


def measure(points, model: str, seed: int, log) -> dict:
    import torch

    from bench.variants import twin
    from rrdemo.backends.loading import load_backend
    from rrdemo.tasks import get_task, load_questions

    base = load_backend(model)
    backend = twin(base, fixed_length=True)
    task = get_task("logic3")
    questions = load_questions(task, n=1, seed=seed)
    rows = []
    for n, k, length in points:
        opts = BenchOptions(
            model=model, n=n, c=min(n - 1, n // 2 + 1), k=k, max_tokens=length, seed=seed
        )
        config = opts.config()
        texts = [agent_prompts(backend, config, task, questions[0])]
        for method in METHODS:  # untimed warm-up at this shape
            run_pass(backend, config, task, questions, method)
        maj = run_pass(backend, config, task, questions, "MAJ")
        rr = run_pass(backend, config, task, questions, "RRMaj")
        row = {
            "n": n,
            "k": k,
            "L": length,
            "label": config.label,
            "maj_wall_s": maj["wall_s"],
            "rr_wall_s": rr["wall_s"],
            "ratio": round(rr["wall_s"] / maj["wall_s"], 3),
            "maj_prefill": maj["prefill_tokens"],
            "rr_prefill": rr["prefill_tokens"],
            "decode_tokens": rr["decode_tokens"],
            "distinct_prompts": len(set(texts[0])),
            **speaker_stats(rr, texts),
            "load_average": round(os.getloadavg()[0], 2),
        }
        log(f"N={n} K={k} L={length}: {row}")
        rows.append(row)
    units = unit_costs(backend, texts[0][0], sorted({r["n"] for r in rows}), log)
    for row in rows:
        row["predicted_ratio"] = predict(row, units)
    return {"model": model, "threads": torch.get_num_threads(), "units": units, "points": rows}


def render(results: dict) -> str:
    lines = [
        f"Model {results['model']}, {results['threads']} torch threads; prefill "
        f"{results['units']['prefill_s_per_token'] * 1000:.2f} ms/token, decode step "
        + ", ".join(
            f"batch {b}: {s * 1000:.0f} ms" for b, s in results["units"]["decode_step_s"].items()
        )
        + ".",
        "",
        "| N | K | L | config | writers / traj | prompt changes | prefill MAJ / RRMaj | "
        "wall s MAJ / RRMaj | RRMaj / MAJ | predicted | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results["points"]:
        lines.append(
            f"| {r['n']} | {r['k']} | {r['L']} | {r['label']} | {r['speakers_per_trajectory']} | "
            f"{r['prompt_change_share']} | {r['maj_prefill']} / {r['rr_prefill']} | "
            f"{r['maj_wall_s']:.1f} / {r['rr_wall_s']:.1f} | {r['ratio']} | "
            f"{r['predicted_ratio']} | {r['load_average']} |"
        )
    return "\n".join(lines)


def figure(results: dict, out: Path) -> list[Path]:
    """Measured and predicted RRMaj / MAJ per point (HTML; PNG when kaleido works)."""
    import plotly.graph_objects as go

    names = [f"N={r['n']} K={r['k']} L={r['L']}" for r in results["points"]]
    fig = go.Figure(
        [
            go.Bar(name="measured", x=names, y=[r["ratio"] for r in results["points"]]),
            go.Bar(
                name="predicted (cost model)",
                x=names,
                y=[r["predicted_ratio"] for r in results["points"]],
            ),
        ]
    )
    fig.add_hline(y=1.0, line_dash="dash")
    fig.update_layout(
        barmode="group",
        title="RRMaj / MAJ wall time at equal decode budget (every agent speaks)",
        yaxis_title="RRMaj / MAJ",
        template="plotly_white",
    )
    written = [out.with_suffix(".html")]
    fig.write_html(written[0], include_plotlyjs="cdn")
    try:
        fig.write_image(out.with_suffix(".png"), width=900, height=450)
        written.append(out.with_suffix(".png"))
    except Exception as exc:  # kaleido needs a browser; the HTML is enough
        print(f"no PNG ({exc.__class__.__name__}: {exc})", file=sys.stderr)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.scaling", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--points", default=DEFAULT_POINTS, help="N:K:L,N:K:L,...")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "scaling.json")
    args = parser.parse_args(argv)
    try:
        points = parse_points(args.points)
        import torch

        torch.set_num_threads(args.threads)
        results = measure(points, args.model, args.seed, lambda m: print(m, file=sys.stderr))
    except RRError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results["median_ratio"] = statistics.median(r["ratio"] for r in results["points"])
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    figure(results, args.out)
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
