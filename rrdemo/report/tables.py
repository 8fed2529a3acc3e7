"""The paper's tables from outcome rows (main table, M scaling, K ablation, yield, rho curve), and
what each condition's recorded votes scored (the live view of a sweep)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rrdemo.config import Composition
from rrdemo.events import METHODS
from rrdemo.report.paper.tables import SCALING_MS  # the paper's M grid (appendix D)
from rrdemo.report.stats import (
    TRIALS,
    ConditionPool,
    Estimate,
    Outcome,
    draw_seed,
    estimate,
    group_pools,
    row_key,
    trial_matrix,
)
from rrdemo.runs.log import RunLog


# -- the run's own votes ----------------------------------------------------------------------------
@dataclass(frozen=True)
class VoteRates:
    """A condition's votes as the run recorded them, over its finished questions: the fraction
    correct and the fraction fooled per method, at the condition's whole budget M* (no pool
    draws, so it can be shown while a sweep runs)."""

    condition: dict[str, Any]  # the log header's condition
    questions: int
    accuracy: dict[str, float]  # by method
    fooled: dict[str, float]


def vote_rates(log: RunLog, methods: Sequence[str] = METHODS) -> list[VoteRates]:
    """Accuracy and fooled rate of each condition's recorded votes, for the conditions with at
    least one finished question, in log order."""
    tallies: dict[str, dict[str, list[tuple[bool, bool]]]] = {}
    for record in log.finished_units():
        by_method = tallies.setdefault(record["condition"], {m: [] for m in methods})
        for method in methods:
            vote = record.get("votes", {}).get(method, {})
            by_method[method].append((bool(vote.get("correct")), bool(vote.get("fooled"))))
    rates = []
    for key, by_method in tallies.items():
        n = len(next(iter(by_method.values())))
        rates.append(
            VoteRates(
                log.conditions[key],
                n,
                {m: sum(ok for ok, _ in votes) / n for m, votes in by_method.items()},
                {m: sum(f for _, f in votes) / n for m, votes in by_method.items()},
            )
        )
    return rates


# -- the main table ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class MainCell(Composition):
    """One corruption setting of a main-table row: MAJ, RRMaj and Delta at M = N."""

    c: int
    n: int
    maj: Estimate
    rrmaj: Estimate
    delta: Estimate


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


def main_table(outcomes: Iterable[Outcome], seed: int = 0, trials: int = TRIALS) -> list[MainRow]:
    """The paper's main table: for each ensemble and dataset, every corruption setting at M = N."""
    by_row: dict[tuple, dict[int, ConditionPool]] = defaultdict(dict)
    for pool in group_pools(outcomes).values():
        by_row[row_key(pool.info)][pool.info.c] = pool
    rows = []
    for key in sorted(by_row):
        cells = {}
        m = min(key[5], min(p.info.m for p in by_row[key].values()))
        for c, pool in sorted(by_row[key].items()):
            maj = trial_matrix(pool, "MAJ", m, trials, seed)
            rr = trial_matrix(pool, "RRMaj", m, trials, seed)
            s = draw_seed(seed, pool.info, "boot")
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
        m_max = min(p.info.m for p in pools)
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
        safe = [c.delta.mean for c in row.cells if c.band == "minority"]
        bad = [c.delta.mean for c in row.cells if c.band == "majority"]
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
