"""What a cost benchmark measures (`BenchOptions`): the one setting bench/cost.py runs,
bench/measure.py measures and bench/scaling.py varies."""

from __future__ import annotations

from dataclasses import dataclass

from rrdemo.errors import RRError


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
    corrupted_only: bool = True  # also time the corrupted-only setting (fixed order, K = 100)

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
        from rrdemo.config import RunConfig, Sampling
        from rrdemo.seats import homogeneous_agents

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
