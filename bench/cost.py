"""Cost parity of RRMaj and MAJ at an equal decoding budget (paper section 3.3), measured.

`python -m bench.cost` (what `make bench` runs) times, in one process, MAJ and RRMaj on the same
questions, agents and seed, alternating MAJ, RRMaj, MAJ, RRMaj ... after an untimed warm-up,
and reads the decode and prefill tokens from the engine's own `ComputeUsed` events. It then runs
RRMaj once more per engine variant (no prefix sharing across agents, no KV reuse at all, no
batching) to show what each optimisation buys, compares the engine's decode throughput with a
plain `model.generate` loop on the same prompts, and measures peak memory for N agents against
one agent in fresh processes. Results go to `bench/results.json` and a table in `bench/README.md`.

Equal decoding budget: chat models often stop long before L, and MAJ answers and RR trajectories
stop at different points, so by default every answer and every trajectory is forced to decode
exactly L tokens (the backend's `suppress_eos`, like `generate(min_new_tokens=L)`). Then MAJ and
RRMaj both decode N x L tokens per question. One extra pass with end-of-sequence allowed is
reported per decoded token.

One module: it is one measurement (setting, timed rounds, variants, throughput,
memory probe in child processes of this same module) whose parts share `BenchOptions` and the
accounting; its table writer is apart (bench/report.py).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from bench.report import render_table, write_readme
from rrdemo.errors import RRError
from rrdemo.events import METHODS

HERE = Path(__file__).resolve().parent
TARGETS = {  # the medians on a 2-core CPU, in the setting where every agent speaks
    "rrmaj_over_maj_wall_ratio": ("<=", 1.05),
    "prefill_tokens_per_trajectory_ratio": ("<=", 1.2),
    "decode_throughput_ratio_vs_generate": (">=", 0.95),
}


@dataclass(frozen=True)
class BenchOptions:
    """What to measure. The defaults are a setting where every agent speaks: SmolLM2, N = M = 5,
    K = 50, L = 256 (>= N x K), a seeded shuffled speaking order per trajectory, strong corruption
    3c2t, seed 0, three Logic3 questions, two threads. `corrupted_only` also measures the earlier
    setting (fixed order, corrupted agents first, K = 100: only the 3 corrupted agents write)."""

    model: str = "smollm2"
    n: int = 5  # N agents
    c: int = 3  # corrupted agents (the first seats)
    k: int = 50  # K tokens per RR turn
    max_tokens: int = 256  # L tokens per MAJ answer and per RR trajectory
    order: str = "shuffled"  # RR speaking order: a seeded shuffle per trajectory, or "fixed"
    m: int | None = None  # M trajectories; None means M = N
    repeats: int = 3  # timed MAJ/RRMaj pairs after the warm-up
    questions: int = 3
    task: str = "logic3"
    seed: int = 0
    threads: int = 2  # torch.set_num_threads
    variants: bool = True  # also run RRMaj without sharing / reuse / batching, and with EOS
    rss: bool = True  # also measure peak RSS of N agents vs 1 agent in fresh processes
    corrupted_only: bool = (
        True  # also time the corrupted-only setting (fixed order, K = 100, same L)
    )

    def validate(self) -> None:
        for name, low in (("n", 1), ("k", 1), ("max_tokens", 1), ("repeats", 1)):
            if getattr(self, name) < low:
                raise RRError(f"--{name.replace('_', '-')} must be at least {low}")
        if not 1 <= self.questions <= 50:
            raise RRError("--questions must be between 1 and 50")
        if not 0 <= self.c <= self.n:
            raise RRError(f"--c must be between 0 and --n ({self.n}), got {self.c}")
        if not 1 <= self.threads <= 256:
            raise RRError("--threads must be between 1 and 256")

    def config(self, n: int | None = None, c: int | None = None):
        """The RunConfig measured (N and c overridable for the memory probe)."""
        from rrdemo.config import RunConfig, Sampling, homogeneous_agents

        n = self.n if n is None else n
        c = self.c if c is None else c
        return RunConfig(
            agents=homogeneous_agents(self.model, n, c),
            strength="strong" if c else "none",
            k=self.k,
            m=self.m,
            max_tokens=self.max_tokens,
            order=self.order,
            sampling=Sampling(seed=self.seed),
        )


# -- engine plumbing ---------------------------------------------------------------------------
def twin(base, **options):
    """Another TransformersBackend over the same weights and tokenizer (no second copy)."""
    from rrdemo.backends.hf import TransformersBackend

    return TransformersBackend(
        base.name,
        base.model,
        base.tokenizer,
        revision=base.revision,
        chat=base.chat,
        eos_token_ids=tuple(base.eos_token_ids),
        **options,
    )


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


def prompt_tokens(backend, config, task, question) -> list[int]:
    """Tokens of each agent's rendered prompt, as the model reads it."""
    return [len(backend.encode(p)) for p in agent_prompts(backend, config, task, question)]


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


def _summary(passes: list[dict]) -> dict:
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
    config = opts.config()
    out = {}
    for name, options in (
        ("no_prefix_sharing", {"share_prefixes": False, "suppress_eos": True}),
        ("no_kv_reuse", {"reuse_cache": False, "suppress_eos": True}),
        ("no_batching", {"batch": False, "suppress_eos": True}),
    ):
        result = run_pass(twin(base, **options), config, task, questions, "RRMaj")
        out[name] = {**_summary([result]), **prefill_ratios(result, prompts)}
        log(f"RRMaj {name}: {result['wall_s']:.1f} s, prefill {result['prefill_tokens']}")
    natural = twin(base)
    for method in METHODS:
        result = run_pass(natural, config, task, questions, method)
        out[f"eos_allowed_{method}"] = _summary([result])
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

    from rrdemo.backends.loading import load_backend
    from rrdemo.tasks import get_task, load_questions

    torch.set_num_threads(opts.threads)
    base = load_backend(opts.model)
    after_load = _status_kb("VmRSS")
    reset = _reset_peak()
    backend = twin(base, suppress_eos=True)
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


def machine_info(threads: int) -> dict:
    import torch
    import transformers

    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "torch_threads": threads,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "device": "cuda" if torch.cuda.is_available() else "cpu",
        "load_average_start": [round(x, 2) for x in os.getloadavg()],
    }


def run_benchmark(opts: BenchOptions, base, log=print) -> dict:
    """Every measurement on `base` (a TransformersBackend); the dict written to results.json."""
    import torch

    from rrdemo.tasks import get_task, load_questions

    opts.validate()
    torch.set_num_threads(opts.threads)
    machine = machine_info(opts.threads)
    task = get_task(opts.task)
    questions = load_questions(task, n=opts.questions, seed=opts.seed)
    config = opts.config()
    backend = twin(base, suppress_eos=True)  # equal decoding budget: exactly L tokens each
    texts = [agent_prompts(backend, config, task, q) for q in questions]
    prompts = [[len(backend.encode(p)) for p in ps] for ps in texts]
    started = time.perf_counter()

    ab = measure_ab(backend, opts, task, questions, log)
    maj, rr = _summary(ab["passes"]["MAJ"]), _summary(ab["passes"]["RRMaj"])
    rr_prefill = prefill_ratios(ab["passes"]["RRMaj"][0], prompts)
    maj_prefill = prefill_ratios(ab["passes"]["MAJ"][0], prompts)
    speakers = speaker_stats(ab["passes"]["RRMaj"][0], texts)
    log(f"speakers: {speakers}")
    corrupted_only = None
    if opts.corrupted_only:
        old = replace(opts, k=min(100, opts.max_tokens), order="fixed")
        old_ab = measure_ab(backend, old, task, questions, log)
        corrupted_only = {
            "settings": {"k": old.k, "max_tokens": old.max_tokens, "order": old.order},
            "maj": _summary(old_ab["passes"]["MAJ"]),
            "rrmaj": {
                **_summary(old_ab["passes"]["RRMaj"]),
                **prefill_ratios(old_ab["passes"]["RRMaj"][0], prompts),
                **speaker_stats(old_ab["passes"]["RRMaj"][0], texts),
            },
            "wall_ratio_rrmaj_over_maj": old_ab["ratio"],
        }
    variants = measure_variants(base, opts, task, questions, prompts, log) if opts.variants else {}
    rendered = agent_prompts(backend, config, task, questions[0])
    throughput = measure_throughput(backend, rendered, opts, log)
    rss = measure_rss(opts, log) if opts.rss else None
    machine["load_average_end"] = [round(x, 2) for x in os.getloadavg()]

    results = {
        "rrmaj_over_maj_wall_ratio": ab["ratio"]["median"],
        "prefill_tokens_per_trajectory_ratio": rr_prefill["ratio_speakers"],
        "decode_throughput_ratio_vs_generate": throughput["decode_ratio"]["median"],
        "peak_rss_ratio_5_agents_vs_1": rss["ratio"] if rss else None,
        "speakers_per_trajectory": speakers["speakers_per_trajectory"],
        "machine": machine,
        "settings": {
            **asdict(opts),
            "m": config.resolved_m,
            "label": config.label,
            "strength": config.strength,
            "sampling": asdict(config.sampling),
            "equal_decode_budget": "EOS suppressed: every MAJ answer and RR trajectory decodes L",
            "questions": [q.qid for q in questions],
            "agent_prompt_tokens": prompts,
        },
        "maj": {**maj, **maj_prefill},
        "rrmaj": {**rr, **rr_prefill, **speakers},
        "wall_ratio_rrmaj_over_maj": ab["ratio"],
        "corrupted_only": corrupted_only,
        "variants": variants,
        "throughput": throughput,
        "memory": rss,
        "bench_wall_s": round(time.perf_counter() - started, 1),
    }
    results["targets"] = _targets(results)
    return results


def _targets(results: dict) -> dict:
    out = {}
    for key, (op, bound) in TARGETS.items():
        value = results[key]
        met = value <= bound if op == "<=" else value >= bound
        out[key] = {"value": value, "target": f"{op} {bound}", "met": met}
    memory = results["memory"]
    if memory:
        out["one_copy_of_weights"] = {
            "value": memory["extra_mb"],
            "target": f"extra peak RSS of N agents < weights ({memory['one_agent']['weights_mb']} MB)",
            "met": memory["one_copy_of_weights"],
        }
    return out


# -- command line ----------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    d = BenchOptions()
    p = argparse.ArgumentParser(
        prog="python -m bench.cost",
        description="Wall time, tokens and memory of MAJ vs RRMaj at equal decoding budget.",
    )
    p.add_argument("--model", default=d.model, help="registry name, hub id or folder")
    p.add_argument("--n", type=int, default=d.n, help="N agents (default %(default)s)")
    p.add_argument("--c", type=int, default=d.c, help="corrupted agents (default %(default)s)")
    p.add_argument("--k", type=int, default=d.k, help="K tokens per RR turn")
    p.add_argument("--max-tokens", type=int, default=d.max_tokens, help="L tokens per answer")
    p.add_argument("--m", type=int, default=None, help="M RR trajectories (default N)")
    p.add_argument(
        "--order", choices=("shuffled", "fixed"), default=d.order, help="RR speaking order"
    )
    p.add_argument("--repeats", type=int, default=d.repeats, help="timed MAJ/RRMaj pairs")
    p.add_argument("--questions", type=int, default=d.questions, help="questions per pass")
    p.add_argument("--task", default=d.task, help="benchmark the questions come from")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--threads", type=int, default=d.threads, help="torch.set_num_threads")
    p.add_argument("--no-variants", action="store_true", help="skip the engine variants")
    p.add_argument("--no-rss", action="store_true", help="skip the memory probes")
    p.add_argument(
        "--no-corrupted-only",
        action="store_true",
        help="skip the second row (fixed order, corrupted first, K=100: only corrupted agents write)",
    )
    p.add_argument("--out", type=Path, default=HERE / "results.json")
    p.add_argument(
        "--readme", type=Path, default=HERE / "README.md", help="file to put the table in"
    )
    p.add_argument("--rss-probe", type=int, default=None, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        opts = BenchOptions(
            model=args.model,
            n=args.n,
            c=args.c,
            k=args.k,
            max_tokens=args.max_tokens,
            m=args.m,
            order=args.order,
            repeats=args.repeats,
            questions=args.questions,
            task=args.task,
            seed=args.seed,
            threads=args.threads,
            variants=not args.no_variants,
            rss=not args.no_rss,
            corrupted_only=not args.no_corrupted_only,
        )
        opts.validate()
        opts.config()  # K <= L, M >= 1 and the rest, checked before any model loads
        if args.rss_probe is not None:
            print(json.dumps(rss_probe(opts, args.rss_probe)))
            return 0
        from rrdemo.backends.loading import load_backend

        base = load_backend(opts.model)
        if not hasattr(base, "model"):
            raise RRError(f"{opts.model!r} is not a local transformers model; the bench needs one")
        results = run_benchmark(opts, base, log=lambda msg: print(msg, file=sys.stderr))
    except RRError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    write_readme(args.readme, render_table(results))
    print(render_table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
