"""The measurements of `bench.cost`: timed passes and the token accounting read from their events,
MAJ against RRMaj, the engine variants, decode throughput against `model.generate`, and peak
memory of N agents against one in fresh processes.

A pass runs one method on every question through `run_question` and keeps the engine's own
counters (`ComputeUsed`) and who wrote each turn (`ChunkWritten`); the ratios and spreads below
are computed from those records only.
"""

from __future__ import annotations

import itertools
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from bench.options import BenchOptions
from rrdemo.errors import RRError
from rrdemo.events import METHODS

HERE = Path(__file__).resolve().parent


# -- one pass and its accounting ------------------------------------------------------------------
class _Fixed:
    """A model source that hands the same backend to every agent."""

    def __init__(self, backend) -> None:
        self.backend = backend

    def get(self, name: str, revision: str | None = None):
        return self.backend


def run_pass(backend, config, task, questions, method: str) -> dict:
    """Run one method on every question; wall time, engine counters and who wrote what."""
    from rrdemo.protocols import run_question

    decode = prefill = 0
    engine_wall = 0.0
    # per trajectory: question index, agents that wrote in it, tokens decoded, writers turn by turn
    trajectories = []
    start = time.perf_counter()
    for qi, question in enumerate(questions):
        writers: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for event in run_question(config, question, task, _Fixed(backend), methods=(method,)):
            if event.kind == "chunk_written":
                writers[event.trajectory].append((event.turn, event.agent))
            elif event.kind == "answer_extracted":
                turns = [agent for _, agent in sorted(writers[event.trajectory])]
                trajectories.append((qi, sorted(set(turns)), event.n_tokens, turns))
            elif event.kind == "compute_used":
                decode += event.decode_tokens
                prefill += event.prefill_tokens
                engine_wall += event.wall_s
    return {
        "wall_s": round(time.perf_counter() - start, 3),
        "engine_wall_s": round(engine_wall, 3),
        "decode_tokens": decode,
        "prefill_tokens": prefill,
        "trajectories": trajectories,
    }


def agent_prompts(backend, config, task, question) -> list[str]:
    """Each agent's rendered prompt (corruption included), built as `run_question` builds it."""
    from rrdemo.agents import build_agents
    from rrdemo.corruption import make_injection
    from rrdemo.protocols import choose_target

    target = choose_target(task, question, config)
    shown = task.format_target(target) if target else None
    injection = make_injection(config.strength, shown) if config.c else None
    agents = build_agents(config, _Fixed(backend), task.prompt(question), injection)
    return [a.prompt for a in agents]


def prefill_ratios(result: dict, prompts: list[list[int]]) -> dict:
    """Prefill tokens per trajectory over (prompt tokens + tokens decoded in it), two ways:
    `speakers` counts the prompts of the agents that wrote in the trajectory, `all_agents` all N."""
    n_traj = len(result["trajectories"])
    speakers = sum(sum(prompts[q][a] for a in who) + n for q, who, n, _ in result["trajectories"])
    everyone = sum(sum(prompts[q]) + n for q, _, n, _ in result["trajectories"])
    return {
        "speakers_prompt_tokens": sum(
            sum(prompts[q][a] for a in who) for q, who, _, _ in result["trajectories"]
        ),
        "prefill_tokens_per_trajectory": round(result["prefill_tokens"] / n_traj, 1),
        "ratio_speakers": round(result["prefill_tokens"] / speakers, 3),
        "ratio_all_agents": round(result["prefill_tokens"] / everyone, 3),
    }


def speaker_stats(result: dict, prompts: list[list[str]]) -> dict:
    """Who wrote, counted from the ChunkWritten events: distinct writers per trajectory (mean) and
    the share of turns after the first whose writer reads another prompt than the previous
    writer (a turn that changed prompt costs a prefill of what the other prompt has not read)."""
    trajectories = result["trajectories"]
    later = changed = 0
    for q, _, _, turns in trajectories:
        later += max(0, len(turns) - 1)
        changed += sum(prompts[q][a] != prompts[q][b] for a, b in itertools.pairwise(turns))
    return {
        "speakers_per_trajectory": round(
            statistics.mean(len(who) for _, who, _, _ in trajectories), 3
        ),
        "turns": sum(len(t) for *_, t in trajectories),
        "prompt_changes": changed,
        "prompt_change_share": round(changed / later, 3) if later else 0.0,
    }


def spread(values: list[float]) -> dict:
    return {
        "median": round(statistics.median(values), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
        "values": [round(v, 4) for v in values],
    }


def summary(passes: list[dict]) -> dict:
    first = passes[0]
    return {
        "wall_s": spread([p["wall_s"] for p in passes]),
        "decode_tokens": first["decode_tokens"],
        "prefill_tokens": first["prefill_tokens"],
        "trajectories": len(first["trajectories"]),
        "s_per_decode_token": round(
            statistics.median(p["wall_s"] for p in passes) / max(1, first["decode_tokens"]), 5
        ),
    }


# -- the measurements ----------------------------------------------------------------------------
def measure_ab(backend, opts: BenchOptions, task, questions, log) -> dict:
    """MAJ and RRMaj alternating, after one untimed warm-up pair on the first question."""
    config = opts.config()
    log(f"{config.label} K={opts.k} L={opts.max_tokens} order={opts.order}: warm-up (not timed)")
    for method in METHODS:
        run_pass(backend, config, task, questions[:1], method)
    passes: dict[str, list[dict]] = {"MAJ": [], "RRMaj": []}
    for r in range(opts.repeats):
        for method in METHODS:
            result = run_pass(backend, config, task, questions, method)
            passes[method].append(result)
            log(f"repeat {r + 1}/{opts.repeats} {method}: {result['wall_s']:.1f} s")
    ratios = [
        rr["wall_s"] / maj["wall_s"] for maj, rr in zip(passes["MAJ"], passes["RRMaj"], strict=True)
    ]
    return {"passes": passes, "ratio": spread(ratios)}


def measure_variants(base, opts: BenchOptions, task, questions, prompts, log) -> dict:
    """RRMaj once per engine variant; MAJ and RRMaj once with end-of-sequence allowed."""
    from bench.variants import NoBatching, NoKvReuse, NoPrefixSharing, twin

    config = opts.config()
    out = {}
    for name, variant in (
        ("no_prefix_sharing", NoPrefixSharing),
        ("no_kv_reuse", NoKvReuse),
        ("no_batching", NoBatching),
    ):
        result = run_pass(twin(base, variant, fixed_length=True), config, task, questions, "RRMaj")
        out[name] = {**summary([result]), **prefill_ratios(result, prompts)}
        log(f"RRMaj {name}: {result['wall_s']:.1f} s, prefill {result['prefill_tokens']}")
    natural = twin(base)
    for method in METHODS:
        result = run_pass(natural, config, task, questions, method)
        out[f"eos_allowed_{method}"] = summary([result])
        log(f"{method} with EOS: {result['wall_s']:.1f} s, decoded {result['decode_tokens']}")
    eos_maj, eos_rr = out["eos_allowed_MAJ"], out["eos_allowed_RRMaj"]
    out["eos_allowed_per_token_ratio"] = round(
        eos_rr["s_per_decode_token"] / max(1e-9, eos_maj["s_per_decode_token"]), 3
    )
    return out


def measure_throughput(backend, prompts: list[str], opts: BenchOptions, log) -> dict:
    """Greedy decoding of the same prompts at the same batch size: engine vs `model.generate`.

    Both decode exactly L tokens per prompt (EOS suppressed). Decode throughput is
    B x (L - 1) / (time for L tokens - time for 1 token), so prompt prefill is left out of both.
    """
    import torch

    from rrdemo.backends.base import GenerationRequest
    from rrdemo.config import Sampling

    tok, model, length = backend.tokenizer, backend.model, opts.max_tokens
    greedy = Sampling(temperature=0.0, seed=opts.seed)

    def engine(n_new: int) -> float:
        requests = [
            GenerationRequest(("bench-tp", i), p, n_new, greedy, i) for i, p in enumerate(prompts)
        ]
        start = time.perf_counter()
        done = [o for o in backend.generate(requests) if o.__class__.__name__ == "Finished"]
        wall = time.perf_counter() - start
        backend.release(("bench-tp",))
        assert all(o.n_tokens == n_new for o in done), "the engine stopped early"
        return wall

    side = tok.padding_side
    tok.padding_side = "left"
    try:
        batch = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=not backend.chat)
    finally:
        tok.padding_side = side
    batch = batch.to(model.device)
    pad = tok.pad_token_id if tok.pad_token_id is not None else sorted(backend.eos_token_ids)[0]

    @torch.inference_mode()
    def generate(n_new: int) -> float:
        start = time.perf_counter()
        out = model.generate(
            **batch,
            max_new_tokens=n_new,
            min_new_tokens=n_new,
            do_sample=False,
            eos_token_id=sorted(backend.eos_token_ids),
            pad_token_id=pad,
        )
        wall = time.perf_counter() - start
        assert out.shape[1] - batch["input_ids"].shape[1] == n_new, "generate stopped early"
        return wall

    engine(2), generate(2)  # warm-up
    rows = {"engine_1": [], "generate_1": [], "engine_L": [], "generate_L": []}
    for r in range(opts.repeats):
        rows["engine_1"].append(engine(1))
        rows["generate_1"].append(generate(1))
        rows["engine_L"].append(engine(length))
        rows["generate_L"].append(generate(length))
        log(
            f"throughput {r + 1}/{opts.repeats}: engine {rows['engine_L'][-1]:.1f} s, "
            f"generate {rows['generate_L'][-1]:.1f} s for {len(prompts)} x {length} tokens"
        )
    b = len(prompts)
    tps = {
        who: [
            b * (length - 1) / max(1e-9, full - one)
            for full, one in zip(rows[f"{who}_L"], rows[f"{who}_1"], strict=True)
        ]
        for who in ("engine", "generate")
    }
    ratios = [e / g for e, g in zip(tps["engine"], tps["generate"], strict=True)]
    end_to_end = [g / e for e, g in zip(rows["engine_L"], rows["generate_L"], strict=True)]
    return {
        "batch_size": b,
        "new_tokens": length,
        "decode_tokens_per_s_engine": spread(tps["engine"]),
        "decode_tokens_per_s_generate": spread(tps["generate"]),
        "decode_ratio": spread(ratios),
        "end_to_end_ratio": spread(end_to_end),
        "wall_s": {k: spread(v) for k, v in rows.items()},
    }


def rss_probe(opts: BenchOptions, n: int) -> dict:
    """In this (fresh) process: load the model, run MAJ then RRMaj with N = n on one question,
    and report memory. With n = 1 nobody is corrupted (there is no one else to outvote).

    Loading the weights peaks above what the run needs, which would hide the difference between
    1 and N agents: after loading, the kernel's peak counter (VmHWM) is reset, so `run_peak_rss_mb`
    is the peak while the agents run, the resident weights included."""
    import resource

    import torch

    from bench.variants import twin
    from rrdemo.backends.loading import load_backend
    from rrdemo.tasks import get_task, load_questions

    torch.set_num_threads(opts.threads)
    base = load_backend(opts.model)
    after_load = _status_kb("VmRSS")
    reset = _reset_peak()
    backend = twin(base, fixed_length=True)
    task = get_task(opts.task)
    questions = load_questions(task, n=1, seed=opts.seed)
    config = opts.config(n=n, c=min(opts.c, n - 1))
    for method in METHODS:
        run_pass(backend, config, task, questions, method)
    weights = sum(p.numel() * p.element_size() for p in base.model.parameters())
    return {
        "n": n,
        "weights_mb": round(weights / 2**20, 1),
        "rss_after_load_mb": round(after_load / 1024, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "run_peak_rss_mb": round(_status_kb("VmHWM") / 1024, 1) if reset else None,
    }


def _reset_peak() -> bool:
    """Reset this process's peak RSS (VmHWM); False where the kernel does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def measure_rss(opts: BenchOptions, log) -> dict:
    """Peak RSS of N agents vs 1 agent, each in a fresh interpreter."""
    probes = {}
    for n in (1, opts.n):
        cmd = [sys.executable, "-m", "bench.cost", "--rss-probe", str(n), *_argv(opts)]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent, check=False)
        if done.returncode != 0:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise RRError(f"the memory probe with N={n} failed: {tail}")
        probes[n] = json.loads(done.stdout.strip().splitlines()[-1])
        log(f"peak RSS with N={n}: {probes[n]}")
    one, many = probes[1], probes[opts.n]
    # The peak while running when both probes could measure it, else the whole process's peak.
    field = (
        "run_peak_rss_mb" if one["run_peak_rss_mb"] and many["run_peak_rss_mb"] else "peak_rss_mb"
    )
    extra = many[field] - one[field]
    return {
        "one_agent": one,
        "n_agents": many,
        "measure": field,
        "ratio": round(many[field] / one[field], 3),
        "extra_mb": round(extra, 1),
        "one_copy_of_weights": extra < one["weights_mb"],
    }


def _argv(opts: BenchOptions) -> list[str]:
    """Command-line options reproducing `opts` (for the memory probes)."""
    args = ["--model", opts.model, "--n", str(opts.n), "--c", str(opts.c), "--k", str(opts.k)]
    args += ["--max-tokens", str(opts.max_tokens), "--task", opts.task, "--seed", str(opts.seed)]
    args += ["--threads", str(opts.threads), "--order", opts.order]
    return args + (["--m", str(opts.m)] if opts.m is not None else [])
