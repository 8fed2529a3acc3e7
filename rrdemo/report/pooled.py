"""RRMaj against MAJ paired per question, for one run or several independent runs pooled, with the
power each had: decisions in, numbers out (no files, no logs).

A run's decisions at one config are, per question, whether MAJ's vote and RRMaj's vote were right.
`paired_estimate` takes one or more such strata (one per run) and gives the accuracy of each method
over all their questions, RRMaj - MAJ with a 95% percentile bootstrap interval that resamples the
questions within each stratum (`BOOT` resamples, seeded), and McNemar's exact p on the pooled
discordant questions (b: MAJ right only, c: RRMaj right only). With one stratum it is the paired
test of one run (`rrdemo.report.paired`). A stratum enters through its four counts (`PairCounts`):
that is all a resample of binary pairs depends on, so the leaderboard, which stores a row's
counts and not its questions, computes the same interval from the same counts.

`pool_runs` pools independent runs: each question counts once, so a run that shares a question
with a run listed before it is shown on its own but left out of the pool, with the reason. A pool
of several strata is seeded by `pool_seed`, from its config and its strata's counts, and draws the
strata in one order of their counts: the same counts give the same interval whatever order they
come in and wherever they come from (the report reads them from logs, the leaderboard from its
rows' stored counts, so the board's pooled line is the README's pooled row number for number).

`smallest_rescue` is the power beside a verdict: the smallest RRMaj lead that McNemar's exact
test (two-sided, 5%) finds with 80% power, at the run's own share of discordant questions and its
number of questions. `verdict` words the interval: "no rescue detected; a rescue above +X
excluded" names the upper bound X a run leaves open.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import astuple, dataclass

import numpy as np

from rrdemo.report.stats import BOOT, interval95
from rrdemo.voting import derive_seed

POOL_NAME = "pooled"  # the pooled line's name in the tables and the plot

ALPHA = 0.05  # the two-sided level of McNemar's exact test
POWER = 0.8  # the power `smallest_rescue` asks for


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p: 2 x P(X <= min(b, c)), X ~ Binomial(b + c, 1/2), capped at 1."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def verdict(lo: float, hi: float) -> str:
    """What a 95% interval of RRMaj - MAJ at a corrupted majority says: a rescue only above 0;
    otherwise no rescue detected, and the largest rescue it leaves open named."""
    if lo > 0:
        return "rescue"
    if hi < 0:
        return "no rescue detected; RRMaj below MAJ"
    return f"no rescue detected; a rescue above {100 * hi:+.1f} excluded"


@dataclass(frozen=True)
class PairCounts:
    """One stratum's questions by outcome pair: what a paired bootstrap over them needs."""

    both_right: int
    maj_only: int  # b
    rrmaj_only: int  # c
    both_wrong: int

    @property
    def questions(self) -> int:
        return self.both_right + self.maj_only + self.rrmaj_only + self.both_wrong

    @classmethod
    def of(cls, maj: Sequence[bool], rrmaj: Sequence[bool]) -> PairCounts:
        """The counts of per-question decisions (MAJ right, RRMaj right)."""
        pairs = [(bool(m), bool(r)) for m, r in zip(maj, rrmaj, strict=True)]
        return cls(
            sum(m and r for m, r in pairs), sum(m and not r for m, r in pairs),
            sum(r and not m for m, r in pairs), sum(not m and not r for m, r in pairs),
        )  # fmt: skip


@dataclass(frozen=True)
class PairedEstimate:
    """RRMaj - MAJ over the questions of one or more strata (fractions; interval 95%)."""

    questions: int
    maj: float
    rrmaj: float
    delta: float
    lo: float
    hi: float
    maj_only: int  # b: questions MAJ got right and RRMaj wrong
    rrmaj_only: int  # c
    p_mcnemar: float
    detectable: float | None  # `smallest_rescue` at this discordance; None: none reaches 80%
    boot: int  # bootstrap resamples behind lo and hi
    strata: int = 1  # runs pooled

    @property
    def verdict(self) -> str:
        """The interval in words (`verdict`)."""
        return verdict(self.lo, self.hi)


def resampled(strata: Sequence[PairCounts], seed: int, boot: int = BOOT) -> list[np.ndarray]:
    """Each stratum's counts in `boot` bootstrap resamples of its questions (boot x 4 ints, in the
    order of `PairCounts`'s fields): drawing n questions with replacement from n is a multinomial
    draw of the four outcome pairs, so a resample needs the counts only, not the questions."""
    rng = np.random.default_rng(seed)
    out = []
    for cell in strata:
        n = cell.questions
        counts = (cell.both_right, cell.maj_only, cell.rrmaj_only, cell.both_wrong)
        out.append(rng.multinomial(n, [k / n for k in counts], size=boot))
    return out


def paired_counts_estimate(
    strata: Sequence[PairCounts], seed: int, boot: int = BOOT
) -> PairedEstimate:
    """The pooled paired estimate of strata given by their counts: every question counts once
    (a stratum weighs as many questions as it has), each stratum's resampled on their own."""
    n = sum(s.questions for s in strata)
    if not strata or any(s.questions == 0 for s in strata):
        raise ValueError("a paired estimate needs at least one question in every stratum")
    draws = resampled(sorted(strata, key=astuple), seed, boot)  # one order: the counts'
    lead = sum(d[:, 2] - d[:, 1] for d in draws)  # whole counts: the sums are exact
    lo, hi = interval95(lead / n)
    b, c = sum(s.maj_only for s in strata), sum(s.rrmaj_only for s in strata)
    maj = sum(s.both_right + s.maj_only for s in strata)
    return PairedEstimate(
        n, maj / n, (maj - b + c) / n, (c - b) / n, lo, hi, b, c, mcnemar_exact(b, c),
        smallest_rescue(n, b + c), boot, len(strata),
    )  # fmt: skip


def pool_seed(label: str, strata: Sequence[PairCounts]) -> int:
    """The seed of a pooled interval: from its config and its strata's counts (in one order), so
    two readers of the same counts, the report from the logs and the board from its rows, agree."""
    return derive_seed(0, "pool", label, *sorted(astuple(s) for s in strata))


def paired_estimate(
    strata: Sequence[tuple[Sequence[bool], Sequence[bool]]], seed: int, boot: int = BOOT
) -> PairedEstimate:
    """(MAJ right, RRMaj right) per question of each stratum in, the pooled paired estimate out
    (`paired_counts_estimate` of their counts)."""
    return paired_counts_estimate([PairCounts.of(maj, rr) for maj, rr in strata], seed, boot)


# -- power -------------------------------------------------------------------------------------------
def _log_pmf(n: int, p: float) -> list[float]:
    """log P(X = k), X ~ Binomial(n, p), for k = 0..n (plain floats: the same on every CPU)."""
    if p <= 0 or p >= 1:
        edge = 0 if p <= 0 else n
        return [0.0 if k == edge else -math.inf for k in range(n + 1)]
    lp, lq = math.log(p), math.log1p(-p)
    base = math.lgamma(n + 1)
    return [
        base - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * lp + (n - k) * lq
        for k in range(n + 1)
    ]


def _critical(discordant: int, alpha: float) -> int | None:
    """The fewest RRMaj-only questions among `discordant` that McNemar's exact test calls
    significant (p < alpha) in RRMaj's favour; None when no split of so few is."""
    for c in range(discordant // 2 + 1, discordant + 1):
        if mcnemar_exact(discordant - c, c) < alpha:
            return c
    return None


def _criticals(n: int, alpha: float) -> list[int | None]:
    """`_critical` for every count of discordant questions 0..n."""
    return [_critical(d, alpha) for d in range(n + 1)]


def rescue_power(
    n: int,
    discordance: float,
    delta: float,
    alpha: float = ALPHA,
    criticals: Sequence[int | None] | None = None,
) -> float:
    """P(McNemar's exact test finds RRMaj ahead) over n questions, a share `discordance` of them
    discordant, when RRMaj leads MAJ by `delta` (0 <= delta <= discordance)."""
    if discordance <= 0:
        return 0.0
    criticals = _criticals(n, alpha) if criticals is None else criticals
    favour = min(1.0, (1 + delta / discordance) / 2)  # P(a discordant question is RRMaj's)
    total = 0.0
    for d, log_p in enumerate(_log_pmf(n, discordance)):
        k = criticals[d]
        if k is None or log_p < -60:  # a count this unlikely adds nothing at 0.0001
            continue
        tail = sum(math.exp(v) for v in _log_pmf(d, favour)[k:])
        total += math.exp(log_p) * tail
    return total


def smallest_rescue(
    n: int, discordant: int, power: float = POWER, alpha: float = ALPHA
) -> float | None:
    """The smallest RRMaj - MAJ (a fraction, to 0.0001) that McNemar's exact test detects with
    `power` over n questions at the observed share of discordant ones; None when even a lead on
    every discordant question (delta = discordance) falls short."""
    discordance = discordant / n if n else 0.0
    if discordance <= 0:
        return None
    criticals = _criticals(n, alpha)

    def enough(delta: float) -> bool:
        return rescue_power(n, discordance, delta, alpha, criticals) >= power

    if not enough(discordance):
        return None
    lo, hi = 0.0, discordance
    while hi - lo > 1e-5:  # power grows with delta
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return round(hi, 4)


# -- pooling independent runs ------------------------------------------------------------------------
@dataclass(frozen=True)
class RunDecisions:
    """One run's decisions at one config, question by question (the same order in each tuple)."""

    name: str  # the run as the tables name it (its folder)
    task: str
    label: str  # the config, "3c2t"
    questions: tuple[str, ...]  # question ids
    maj: tuple[bool, ...]  # whether MAJ's vote was right
    rrmaj: tuple[bool, ...]  # whether RRMaj's vote was right
    seed: int = 0  # the seed of its own interval (the run's report's, so both give one number)
    detail: str = ""  # its settings in words, for the tables ("direct, moderate, `end`")


@dataclass(frozen=True)
class PooledRun:
    """One run as the pool shows it: its own paired estimate, and whether the pool counts it."""

    run: RunDecisions
    estimate: PairedEstimate
    left_out: str | None  # why the pool does not count it (a shared question); None: pooled


@dataclass(frozen=True)
class Pool:
    label: str
    runs: tuple[PooledRun, ...]
    pooled: PairedEstimate | None  # None: no run to pool

    @property
    def pooled_names(self) -> tuple[str, ...]:
        return tuple(r.run.name for r in self.runs if r.left_out is None)


def pool_runs(runs: Sequence[RunDecisions], seed: int | None = None, boot: int = BOOT) -> Pool:
    """Each run's own estimate and the pooled one over the runs that share no question with a run
    listed before them, seeded by `seed` (None: `pool_seed` of the pooled runs' counts)."""
    labels = {r.label for r in runs}
    if len(labels) > 1:
        raise ValueError(f"a pool is at one config; these runs are at {', '.join(sorted(labels))}")
    seen: dict[tuple[str, str], str] = {}
    shown = []
    for run in runs:
        keys = [(run.task, q) for q in run.questions]
        shared = [k for k in keys if k in seen]
        why = None
        if shared:
            names = ", ".join(sorted({seen[k] for k in shared}))
            why = f"shares {len(shared)} of its {len(keys)} questions with {names}"
        else:
            seen.update(dict.fromkeys(keys, run.name))
        own = paired_estimate([(run.maj, run.rrmaj)], run.seed, boot)
        shown.append(PooledRun(run, own, why))
    label = labels.pop() if labels else ""
    counted = [PairCounts.of(r.run.maj, r.run.rrmaj) for r in shown if r.left_out is None]
    if seed is None:
        seed = pool_seed(label, counted)
    pooled = paired_counts_estimate(counted, seed, boot) if counted else None
    return Pool(label, tuple(shown), pooled)
