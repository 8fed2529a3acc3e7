"""Outcome pools and the statistics over them: votes over pool draws, estimates with intervals.

Every row is one `Outcome`: a single MAJ answer or a single RR trajectory of one condition and
question. A condition's rows for one question form its *pool* (M* answers, M* trajectories).

Pool design (the paper's appendix D). For a budget M <= M*, one trial draws M members of each
question's pool without replacement and takes the plurality (ties broken at random; unreadable
answers do not vote; a vote with no readable answer is wrong); the accuracy is averaged over 50
trials. RRMaj draws M of the M* trajectories. MAJ keeps the ensemble's c:t composition: it draws
M*c/N answers from the corrupted agents' answers and the rest from the honest agents' (the
fraction is rounded up with probability equal to its remainder, so the expected share is exact).
At M = 1 no draw is made: RRMaj is the mean accuracy of one trajectory, p_rr, and MAJ is the
expectation c/(c+t) P(corrupted correct) + t/(c+t) P(honest correct).

Intervals: `std` is the spread over the pool-sampling trials (the paper's "±"); `lo`/`hi` is a 95%
percentile bootstrap over questions (`BOOT` = 10,000 resamples, each question with a random trial), so it
covers both the question sample and the pool draws. Delta = RRMaj - MAJ is bootstrapped paired on
the same resampled questions. Each condition's draws are seeded from its name in the tables
(`draw_seed`), so the same log gives the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rrdemo.runs.log import Outcome
from rrdemo.voting import derive_seed

TRIALS = 50  # pool-sampling trials (the paper's 50 bootstrap trials)
# bootstrap resamples for every 95% interval a table or a verdict reads: with 1,000 a bound on the
# grid of 1/n moved by a step between seeds; 10,000 holds it (the resamples are vectorised)
BOOT = 10_000


@dataclass(frozen=True)
class Estimate:
    """An accuracy (fraction): mean over trials, spread over trials, 95% bootstrap interval."""

    mean: float
    std: float
    lo: float
    hi: float
    n_questions: int


@dataclass
class ConditionPool:
    """All rows of one condition, by question and method."""

    info: Outcome  # any row of the condition (for its metadata)
    questions: dict[str, dict[str, list[Outcome]]] = field(default_factory=dict)

    def members(self, method: str) -> list[list[Outcome]]:
        return [self.questions[q].get(method, []) for q in sorted(self.questions)]


def group_pools(outcomes: Iterable[Outcome]) -> dict[str, ConditionPool]:
    """Rows grouped by condition, then question, then method."""
    pools: dict[str, ConditionPool] = {}
    for row in outcomes:
        pool = pools.setdefault(row.condition, ConditionPool(row))
        pool.questions.setdefault(row.question_id, {}).setdefault(row.method, []).append(row)
    return pools


# -- votes and trials, vectorised over the 50 trials ---------------------------------------------------
def select(
    corrupted: np.ndarray,
    method: str,
    m: int,
    n: int,
    c: int,
    trials: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Which pool members each trial draws (trials x pool, bool): M of them without replacement;
    MAJ keeps the c:t composition (M*c/N corrupted answers, the fraction rounded up at random)."""
    size = len(corrupted)
    if m >= size:
        return np.ones((trials, size), dtype=bool)
    bad, good = np.flatnonzero(corrupted), np.flatnonzero(~corrupted)
    if method != "MAJ" or not 0 < c < n or not len(bad) or not len(good):
        return _ranks(rng, trials, size) < m
    share = m * c / n
    k_bad = int(share) + (rng.random(trials) < share - int(share))
    k_bad = np.clip(k_bad, max(m - len(good), 0), min(len(bad), m))
    mask = np.zeros((trials, size), dtype=bool)
    mask[:, bad] = _ranks(rng, trials, len(bad)) < k_bad[:, None]
    mask[:, good] = _ranks(rng, trials, len(good)) < (m - k_bad)[:, None]
    return mask


def _ranks(rng: np.random.Generator, trials: int, size: int) -> np.ndarray:
    """A uniformly random order of `size` members in each trial (rank of each member)."""
    return rng.random((trials, size)).argsort(axis=1).argsort(axis=1)


def vote(mask: np.ndarray, keys: Sequence[str | None], correct: Sequence[bool], rng) -> np.ndarray:
    """1.0 where the plurality of a trial's drawn members is a correct answer, else 0.0.

    Ties are broken uniformly at random; unreadable answers (key None) do not vote, and a trial
    with no readable answer is wrong.
    """
    labels = sorted({k for k in keys if k is not None})
    if not labels:
        return np.zeros(len(mask))
    code = {k: i for i, k in enumerate(labels)}
    onehot = np.zeros((len(keys), len(labels)))
    right = np.zeros(len(labels))
    for i, (k, ok) in enumerate(zip(keys, correct, strict=True)):
        if k is not None:
            onehot[i, code[k]] = 1.0
            right[code[k]] = float(ok)
    counts = mask.astype(float) @ onehot
    # integer counts plus noise in [0, 0.5): the order of unequal counts is kept, ties fall at random
    winner = np.argmax(counts + 0.5 * rng.random(counts.shape), axis=1)
    return np.where(counts.max(axis=1) > 0, right[winner], 0.0)


def expected_single(rows: Sequence[Outcome], method: str, n: int, c: int) -> float:
    """M = 1: p_rr for RRMaj; c/N P(corrupted correct) + t/N P(honest correct) for MAJ."""
    if not rows:
        return 0.0
    if method == "MAJ" and 0 < c < n:
        bad = [r.correct for r in rows if r.corrupted]
        good = [r.correct for r in rows if not r.corrupted]
        if bad and good:
            return c / n * float(np.mean(bad)) + (n - c) / n * float(np.mean(good))
    return float(np.mean([r.correct for r in rows]))


def draw_seed(seed: int, info: Outcome, *parts: object) -> int:
    """The seed of one condition's random draws (pool trials, ties, bootstrap resamples).

    It derives from what the tables name the condition by (task, ensemble, strength, K, L, N, c,
    M*, adversary), never from its config hash, so a change in how configs are hashed (a new
    `RunConfig` field moves every hash) leaves every number as it is.
    """
    cell = (info.task, info.ensemble, info.strength, info.k, info.max_tokens, info.n, info.c)
    return derive_seed(seed, *cell, info.m, info.adversary, *parts)


def trial_matrix(
    pool: ConditionPool, method: str, m: int, trials: int = TRIALS, seed: int = 0
) -> np.ndarray:
    """Correctness of each question (rows) in each pool-sampling trial (columns) at budget M."""
    info = pool.info
    rng = np.random.default_rng(draw_seed(seed, info, method, m))
    members = pool.members(method)
    out = np.zeros((len(members), trials))
    for q, rows in enumerate(members):
        if m == 1 or not rows:
            out[q, :] = expected_single(rows, method, info.n, info.c)
            continue
        corrupted = np.array([r.corrupted for r in rows])
        mask = select(corrupted, method, m, info.n, info.c, trials, rng)
        out[q, :] = vote(mask, [r.vote_key for r in rows], [r.correct for r in rows], rng)
    return out


def estimate(
    matrix: np.ndarray, seed: int = 0, boot: int = BOOT, paired: np.ndarray | None = None
) -> Estimate:
    """Mean, trial spread and 95% question-bootstrap interval of a trial matrix (or of
    `matrix - paired` on the same resampled questions, for Delta)."""
    q = matrix.shape[0]
    if q == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0)
    diff = matrix if paired is None else matrix - paired
    per_trial = diff.mean(axis=0)
    rng = np.random.default_rng(seed)
    rows = resample(rng, q, boot)
    acc = resampled_means(matrix, rows, rng)
    if paired is not None:
        acc = acc - resampled_means(paired, rows, rng)
    lo, hi = interval95(acc)
    return Estimate(float(per_trial.mean()), float(per_trial.std()), lo, hi, q)


# -- the bootstrap ------------------------------------------------------------------------------------
def resample(rng: np.random.Generator, n: int, boot: int = BOOT) -> np.ndarray:
    """`boot` bootstrap resamples of n items (indices drawn with replacement), one per row."""
    return rng.integers(n, size=(boot, n))


def resampled_means(values: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The mean of `values` in each resample of `rows`. A trial matrix (questions x trials) gives
    each drawn question one random trial, so the spread covers the pool draws as well."""
    if values.ndim == 2:
        return values[rows, rng.integers(values.shape[1], size=rows.shape)].mean(axis=1)
    return values[rows].mean(axis=1)


def interval95(
    samples: np.ndarray | Sequence[float], skip_nan: bool = False
) -> tuple[float, float]:
    """The 95% percentile interval of bootstrap samples; `skip_nan` leaves out resamples whose
    statistic is undefined (NaN, e.g. a ratio whose resample has no denominator)."""
    lo, hi = (np.nanpercentile if skip_nan else np.percentile)(samples, [2.5, 97.5])
    return float(lo), float(hi)


def row_key(r: Outcome) -> tuple:
    """The main-table line a condition belongs to: (ensemble, task, strength, K, L, N)."""
    return (r.ensemble, r.task, r.strength, r.k, r.max_tokens, r.n)


def wilson95(successes: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (NaN, NaN for n = 0). Unlike a bootstrap it
    stays honest at 0 or n successes of a few trials, where a calibration cell often sits."""
    if n == 0:
        return math.nan, math.nan
    z = 1.959963984540054
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)
