"""Who spoke last, who wrote and who opened: the final-speaker test, the trajectory mix and the
openers (rrdemo.report)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from rrdemo.report.stats import (
    Outcome,
    row_key,
)


# -- final speaker ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class FinalSpeakerRow:
    """Accuracy of RR trajectories ended by an honest agent (Clean-Last) vs a corrupted agent (Corrupt-Last)."""

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


def final_speaker(outcomes: Iterable[Outcome], mixed_only: bool = False) -> list[FinalSpeakerRow]:
    """The final-speaker test over the RR trajectories of each mixed setting (0 < c < N), pooled
    across datasets as in the paper's appendix. `mixed_only` keeps only trajectories that both an
    honest and a corrupted agent wrote: in a single-role trajectory the last speaker is simply
    its only role, so the test would measure who opened, not who spoke last."""
    from scipy.stats import fisher_exact  # scipy is slow to import

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
        rows.append(FinalSpeakerRow(*key, len(clean), c_acc, len(bad), b_acc, c_acc - b_acc, p))
    return rows


# -- who wrote the trajectories --------------------------------------------------------------------
@dataclass(frozen=True)
class ConditionRow:
    """What names a condition in the trajectory tables (its dataset, ensemble, strength, K, config)."""

    task: str
    ensemble: str
    strength: str
    k: int
    label: str

    @property
    def setting(self) -> list:
        """The naming cells of a table row."""
        return [self.task, self.ensemble, self.strength, self.k, self.label]


def _by_condition(outcomes: Iterable[Outcome]) -> list[list[Outcome]]:
    """The outcomes grouped by condition, in table order (dataset, ensemble, ..., then c)."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for r in outcomes:
        groups[r.condition].append(r)
    return sorted(groups.values(), key=lambda rs: (*row_key(rs[0]), rs[0].c))


def _names(r: Outcome) -> tuple:
    """The `ConditionRow` fields of an outcome's condition."""
    return r.task, r.ensemble, r.strength, r.k, r.label


@dataclass(frozen=True)
class MixRow(ConditionRow):
    """Per condition: how many RR trajectories were mixed (both roles wrote) and how each kind scored."""

    trajectories: int
    mixed_n: int
    mixed_share: float
    mixed_acc: float  # per-trajectory RRMaj accuracy on mixed trajectories (NaN when none)
    single_n: int
    single_acc: float  # ... on trajectories written by one role only (NaN when none)


def speaker_mix(outcomes: Iterable[Outcome]) -> list[MixRow]:
    """The share of mixed RR trajectories per condition, and the accuracy of mixed vs single-role
    trajectories. Trajectories whose writers are unknown are left out."""
    rows = []
    for rs in _by_condition(r for r in outcomes if r.method == "RRMaj" and r.mixed is not None):
        mixed = [r.correct for r in rs if r.mixed]
        single = [r.correct for r in rs if not r.mixed]
        rows.append(
            MixRow(
                *_names(rs[0]),
                len(rs),
                len(mixed),
                len(mixed) / len(rs),
                float(np.mean(mixed)) if mixed else math.nan,
                len(single),
                float(np.mean(single)) if single else math.nan,
            )
        )
    return rows


# -- who opened the trajectories -------------------------------------------------------------------
@dataclass(frozen=True)
class OpenerRow(ConditionRow):
    """Per mixed setting (0 < c < N): the RR trajectories by the role of their first writer.

    A trajectory a corrupted agent opens and no honest agent writes in afterwards was closed
    before any honest turn (the corrupted opener answered and ended it, or every later writer was
    corrupted too): the share no rescue can reach in that setting."""

    trajectories: int
    corrupt_open_n: int
    corrupt_only_n: int  # of those, no honest agent wrote at all
    corrupt_open_acc: float  # NaN when none
    corrupt_open_fooled: float
    honest_open_n: int
    honest_open_acc: float
    honest_open_fooled: float


def _rate(values: list[bool]) -> float:
    return float(np.mean(values)) if values else math.nan


def openers(outcomes: Iterable[Outcome]) -> list[OpenerRow]:
    """RR trajectories of each mixed setting split by who opened them, with accuracy and the share
    fooled (the target) of each part. Trajectories whose writers are unknown are left out."""
    rows = []
    kept = (r for r in outcomes if r.method == "RRMaj" and r.opener is not None and 0 < r.c < r.n)
    for rs in _by_condition(kept):
        bad = [r for r in rs if r.opener == "corrupted"]
        good = [r for r in rs if r.opener == "honest"]
        rows.append(
            OpenerRow(
                *_names(rs[0]),
                len(rs),
                len(bad),
                sum(not r.mixed for r in bad),
                _rate([r.correct for r in bad]),
                _rate([r.fooled for r in bad]),
                len(good),
                _rate([r.correct for r in good]),
                _rate([r.fooled for r in good]),
            )  # fmt: skip
        )
    return rows
