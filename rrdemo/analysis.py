"""The paper's analyses as pure functions: outcome rows in, numbers out (no I/O, no plotting).

Every row is one `Outcome`: a single MAJ answer or a single RR trajectory of one condition and
question. A condition's rows for one question form its *pool* (M* answers, M* trajectories).

Pool design (the paper's appendix D). For a budget M <= M*, one trial draws M members of each
question's pool without replacement and takes the plurality (ties broken at random; unreadable
answers do not vote; a vote with no readable answer is wrong); the accuracy is averaged over 50
trials. RRMaj draws M of the M* trajectories. MAJ keeps the ensemble's c:t composition: it draws
M*c/N answers from the corrupted agents' answers and the rest from the truthful agents' (the
fraction is rounded up with probability equal to its remainder, so the expected share is exact).
At M = 1 no draw is made: RRMaj is the mean accuracy of one trajectory, p_rr, and MAJ is the
expectation c/(c+t) P(corrupted correct) + t/(c+t) P(truthful correct).

Intervals: `std` is the spread over the pool-sampling trials (the paper's "±"); `lo`/`hi` is a 95%
percentile bootstrap over questions (1000 resamples, each question with a random trial), so it
covers both the question sample and the pool draws. Delta = RRMaj - MAJ is bootstrapped paired on
the same resampled questions.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rrdemo.voting import derive_seed

TRIALS = 50  # pool-sampling trials (the paper's 50 bootstrap trials)
BOOT = 1000  # question bootstrap resamples for the 95% intervals
SCALING_MS: tuple[int, ...] = (1, 5, 10, 20, 30, 40)


@dataclass(frozen=True)
class Outcome:
    """One MAJ answer or one RR trajectory, with the condition it belongs to."""

    condition: str  # "task:config_hash", unique per condition
    ensemble: str  # model name, or the seats spelled out for a mixed ensemble
    task: str
    strength: str
    k: int
    max_tokens: int
    n: int  # N agents
    c: int  # corrupted agents
    m_star: int  # pool size of the condition
    question_id: str
    method: str  # "MAJ" or "RRMaj"
    trajectory: int
    vote_key: str | None  # what votes are grouped by; None = no answer could be read
    correct: bool
    corrupted: bool  # MAJ: the answering agent is corrupted; RRMaj: the last speaker is
    mixed: bool | None = None  # RRMaj: both an honest and a corrupted agent wrote (None: unknown)
    adversary: str = "static"  # adversary strategy of the condition (rrdemo.adversary)

    @property
    def t(self) -> int:
        return self.n - self.c

    @property
    def rho(self) -> float:
        return self.c / self.n

    @property
    def label(self) -> str:
        return f"{self.c}c{self.t}t"


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
    """M = 1: p_rr for RRMaj; c/N P(corrupted correct) + t/N P(truthful correct) for MAJ."""
    if not rows:
        return 0.0
    if method == "MAJ" and 0 < c < n:
        bad = [r.correct for r in rows if r.corrupted]
        good = [r.correct for r in rows if not r.corrupted]
        if bad and good:
            return c / n * float(np.mean(bad)) + (n - c) / n * float(np.mean(good))
    return float(np.mean([r.correct for r in rows]))


def trial_matrix(
    pool: ConditionPool, method: str, m: int, trials: int = TRIALS, seed: int = 0
) -> np.ndarray:
    """Correctness of each question (rows) in each pool-sampling trial (columns) at budget M."""
    info = pool.info
    rng = np.random.default_rng(derive_seed(seed, info.condition, method, m))
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
    q, trials = matrix.shape
    if q == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan, 0)
    diff = matrix if paired is None else matrix - paired
    per_trial = diff.mean(axis=0)
    rng = np.random.default_rng(seed)
    qi = rng.integers(q, size=(boot, q))
    acc = matrix[qi, rng.integers(trials, size=(boot, q))].mean(axis=1)
    if paired is not None:
        acc = acc - paired[qi, rng.integers(trials, size=(boot, q))].mean(axis=1)
    lo, hi = np.percentile(acc, [2.5, 97.5])
    return Estimate(float(per_trial.mean()), float(per_trial.std()), float(lo), float(hi), q)


# -- the main table ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class MainCell:
    """One corruption setting of a main-table row: MAJ, RRMaj and Delta at M = N."""

    c: int
    n: int
    maj: Estimate
    rrmaj: Estimate
    delta: Estimate

    @property
    def label(self) -> str:
        return f"{self.c}c{self.n - self.c}t"

    @property
    def rho(self) -> float:
        return self.c / self.n


@dataclass(frozen=True)
class MainRow:
    """One (ensemble, dataset, strength, K, L, N) line: Ceiling | per config | Floor (paper layout)."""

    ensemble: str
    task: str
    strength: str
    k: int
    max_tokens: int
    n: int
    m: int
    ceiling: MainCell | None  # 0cNt (the table prints its MAJ accuracy)
    floor: MainCell | None  # Nc0t
    cells: tuple[MainCell, ...]  # 0 < c < N, by c


def _row_key(r: Outcome) -> tuple:
    return (r.ensemble, r.task, r.strength, r.k, r.max_tokens, r.n)


def main_table(outcomes: Iterable[Outcome], seed: int = 0, trials: int = TRIALS) -> list[MainRow]:
    """The paper's main table: for each ensemble and dataset, every corruption setting at M = N."""
    by_row: dict[tuple, dict[int, ConditionPool]] = defaultdict(dict)
    for pool in group_pools(outcomes).values():
        by_row[_row_key(pool.info)][pool.info.c] = pool
    rows = []
    for key in sorted(by_row):
        cells = {}
        m = min(key[5], min(p.info.m_star for p in by_row[key].values()))
        for c, pool in sorted(by_row[key].items()):
            maj = trial_matrix(pool, "MAJ", m, trials, seed)
            rr = trial_matrix(pool, "RRMaj", m, trials, seed)
            s = derive_seed(seed, pool.info.condition, "boot")
            cells[c] = MainCell(
                c, key[5], estimate(maj, s), estimate(rr, s), estimate(rr, s, paired=maj)
            )
        n = key[5]
        middle = tuple(cells[c] for c in sorted(cells) if 0 < c < n)
        rows.append(MainRow(*key, m=m, ceiling=cells.get(0), floor=cells.get(n), cells=middle))
    return rows


# -- M scaling --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScalingPoint:
    """Accuracy at budget M: for one dataset, or averaged over datasets (task = "all")."""

    ensemble: str
    strength: str
    k: int
    label: str
    task: str
    method: str  # "MAJ", "RRMaj" or "Delta" (RRMaj - MAJ)
    m: int
    mean: float
    std: float  # spread over the pool-sampling trials


def m_scaling(
    outcomes: Iterable[Outcome], ms: Sequence[int] = SCALING_MS, seed: int = 0, trials: int = TRIALS
) -> list[ScalingPoint]:
    """MAJ vs RRMaj accuracy against M (each M of `ms` up to M*, and M* itself), per dataset and
    averaged over datasets."""
    groups: dict[tuple, list[ConditionPool]] = defaultdict(list)
    for pool in group_pools(outcomes).values():
        i = pool.info
        groups[(i.ensemble, i.strength, i.k, i.label)].append(pool)
    points = []
    for key in sorted(groups, key=lambda g: (g[0], g[1], g[2], g[3].split("c")[0].zfill(3))):
        pools = sorted(groups[key], key=lambda p: p.info.task)
        m_max = min(p.info.m_star for p in pools)
        for m in sorted({m for m in ms if m <= m_max} | {m_max}):
            per_trial: dict[str, list[np.ndarray]] = defaultdict(list)
            for pool in pools:
                maj = trial_matrix(pool, "MAJ", m, trials, seed).mean(axis=0)
                rr = trial_matrix(pool, "RRMaj", m, trials, seed).mean(axis=0)
                for method, values in (("MAJ", maj), ("RRMaj", rr), ("Delta", rr - maj)):
                    per_trial[method].append(values)
                    points.append(
                        ScalingPoint(
                            *key,
                            pool.info.task,
                            method,
                            m,
                            float(values.mean()),
                            float(values.std()),
                        )
                    )
            for method, values in per_trial.items():
                avg = np.mean(values, axis=0)
                points.append(
                    ScalingPoint(*key, "all", method, m, float(avg.mean()), float(avg.std()))
                )
    return points


# -- final speaker ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class SpeakerRow:
    """Accuracy of RR trajectories ended by a truthful (Clean-Last) vs a corrupted agent (Corrupt-Last)."""

    ensemble: str
    strength: str
    k: int
    label: str
    rho: float
    clean_n: int
    clean_acc: float
    corrupt_n: int
    corrupt_acc: float
    delta: float  # clean - corrupt
    p_value: float  # Fisher's exact test, two-sided; NaN when a group is empty


def final_speaker(outcomes: Iterable[Outcome], mixed_only: bool = False) -> list[SpeakerRow]:
    """The final-speaker test over the RR trajectories of each mixed setting (0 < c < N), pooled
    across datasets as in the paper's appendix. `mixed_only` keeps only trajectories that both an
    honest and a corrupted agent wrote: in a single-role trajectory the last speaker is simply
    its only role, so the test would measure who opened, not who spoke last."""
    from scipy.stats import fisher_exact  # noqa: PLC0415 - scipy is slow to import

    groups: dict[tuple, list[Outcome]] = defaultdict(list)
    for r in outcomes:
        if mixed_only and not r.mixed:
            continue
        if r.method == "RRMaj" and 0 < r.c < r.n:
            groups[(r.ensemble, r.strength, r.k, r.label, r.rho)].append(r)
    rows = []
    for key in sorted(groups, key=lambda g: (g[0], g[1], g[2], g[4])):
        clean = [r.correct for r in groups[key] if not r.corrupted]
        bad = [r.correct for r in groups[key] if r.corrupted]
        c_acc = float(np.mean(clean)) if clean else math.nan
        b_acc = float(np.mean(bad)) if bad else math.nan
        p = math.nan
        if clean and bad:
            table = [[sum(clean), len(clean) - sum(clean)], [sum(bad), len(bad) - sum(bad)]]
            p = float(fisher_exact(table, alternative="two-sided").pvalue)
        rows.append(SpeakerRow(*key, len(clean), c_acc, len(bad), b_acc, c_acc - b_acc, p))
    return rows


# -- who wrote the trajectories --------------------------------------------------------------------
@dataclass(frozen=True)
class MixRow:
    """Per condition: how many RR trajectories were mixed (both roles wrote) and how each kind scored."""

    task: str
    ensemble: str
    strength: str
    k: int
    label: str
    trajectories: int
    mixed_n: int
    mixed_share: float
    mixed_acc: float  # per-trajectory RRMaj accuracy on mixed trajectories (NaN when none)
    single_n: int
    single_acc: float  # ... on trajectories written by one role only (NaN when none)


def speaker_mix(outcomes: Iterable[Outcome]) -> list[MixRow]:
    """The share of mixed RR trajectories per condition, and the accuracy of mixed vs single-role
    trajectories. Trajectories whose writers are unknown are left out."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for r in outcomes:
        if r.method == "RRMaj" and r.mixed is not None:
            groups[r.condition].append(r)
    rows = []
    for key in sorted(groups, key=lambda g: (*_row_key(groups[g][0]), groups[g][0].c)):
        rs = groups[key]
        mixed = [r.correct for r in rs if r.mixed]
        single = [r.correct for r in rs if not r.mixed]
        i = rs[0]
        rows.append(
            MixRow(
                i.task,
                i.ensemble,
                i.strength,
                i.k,
                i.label,
                len(rs),
                len(mixed),
                len(mixed) / len(rs),
                float(np.mean(mixed)) if mixed else math.nan,
                len(single),
                float(np.mean(single)) if single else math.nan,
            )
        )
    return rows


# -- K ablation, asymmetric yield, accuracy against rho ---------------------------------------------
@dataclass(frozen=True)
class KPoint:
    ensemble: str
    strength: str
    label: str
    task: str  # or "all" (mean over datasets)
    k: int
    rrmaj: float
    maj: float


def k_ablation(rows: Sequence[MainRow]) -> list[KPoint]:
    """RRMaj (and MAJ, which K does not touch) accuracy against K, per setting and dataset."""
    points = []
    groups: dict[tuple, list[KPoint]] = defaultdict(list)
    for row in rows:
        for cell in _all_cells(row):
            p = KPoint(
                row.ensemble,
                row.strength,
                cell.label,
                row.task,
                row.k,
                cell.rrmaj.mean,
                cell.maj.mean,
            )
            points.append(p)
            groups[(row.ensemble, row.strength, cell.label, row.k)].append(p)
    for (ens, strength, label, k), ps in groups.items():
        points.append(
            KPoint(
                ens,
                strength,
                label,
                "all",
                k,
                float(np.mean([p.rrmaj for p in ps])),
                float(np.mean([p.maj for p in ps])),
            )
        )
    return sorted(
        points, key=lambda p: (p.ensemble, p.strength, p.label, p.task == "all", p.task, p.k)
    )


def _all_cells(row: MainRow) -> list[MainCell]:
    return [c for c in (row.ceiling, *row.cells, row.floor) if c is not None]


@dataclass(frozen=True)
class YieldRow:
    """Mean Delta when safe (0 < rho <= 0.4) against mean Delta when compromised (0.6 <= rho < 1)."""

    ensemble: str
    task: str  # or "all": mean over datasets of the per-dataset means
    strength: str
    k: int
    safe_delta: float  # NaN when no such setting was run
    n_safe: int
    compromised_delta: float
    n_compromised: int


def asymmetric_yield(rows: Sequence[MainRow]) -> list[YieldRow]:
    """The paper's asymmetric yield: the robustness tax against the rescue, from main-table Deltas."""
    out = []
    groups: dict[tuple, list[YieldRow]] = defaultdict(list)
    for row in rows:
        safe = [c.delta.mean for c in row.cells if c.rho <= 0.4 + 1e-9]
        bad = [c.delta.mean for c in row.cells if c.rho >= 0.6 - 1e-9]
        y = YieldRow(
            row.ensemble,
            row.task,
            row.strength,
            row.k,
            _mean(safe),
            len(safe),
            _mean(bad),
            len(bad),
        )
        out.append(y)
        groups[(row.ensemble, row.strength, row.k)].append(y)
    for (ens, strength, k), ys in sorted(groups.items()):
        safe = [y.safe_delta for y in ys if y.n_safe]
        bad = [y.compromised_delta for y in ys if y.n_compromised]
        out.append(YieldRow(ens, "all", strength, k, _mean(safe), len(safe), _mean(bad), len(bad)))
    return out


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if values else math.nan


@dataclass(frozen=True)
class RhoPoint:
    ensemble: str
    strength: str
    k: int
    task: str  # or "all" (mean over datasets; no interval)
    method: str
    rho: float
    label: str
    accuracy: float
    lo: float
    hi: float


def rho_curve(rows: Sequence[MainRow]) -> list[RhoPoint]:
    """MAJ and RRMaj accuracy against rho = c/N (bounds included), per dataset and averaged."""
    points = []
    groups: dict[tuple, list[float]] = defaultdict(list)
    for row in rows:
        for cell in _all_cells(row):
            for method, e in (("MAJ", cell.maj), ("RRMaj", cell.rrmaj)):
                points.append(
                    RhoPoint(
                        row.ensemble,
                        row.strength,
                        row.k,
                        row.task,
                        method,
                        cell.rho,
                        cell.label,
                        e.mean,
                        e.lo,
                        e.hi,
                    )
                )
                groups[(row.ensemble, row.strength, row.k, method, cell.rho, cell.label)].append(
                    e.mean
                )
    for (ens, strength, k, method, rho, label), values in groups.items():
        points.append(
            RhoPoint(
                ens,
                strength,
                k,
                "all",
                method,
                rho,
                label,
                float(np.mean(values)),
                math.nan,
                math.nan,
            )
        )
    return sorted(points, key=lambda p: (p.ensemble, p.strength, p.k, p.task, p.method, p.rho))
