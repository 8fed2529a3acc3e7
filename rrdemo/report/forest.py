"""What the forest plot draws: each run's and the pool's RRMaj - MAJ with its interval, and beside
a run on a paper task the paper's own Delta at the same config and injection for each of its
models (`rrdemo.report.paper.main_tables`; a point, no interval: the paper prints none). Drawn by
`rrdemo.report.figures.forest_figure`.
"""

from __future__ import annotations

from dataclasses import dataclass

from rrdemo.report.paper.main_tables import MAIN_CONFIGS, main_lines
from rrdemo.report.pooled import POOL_NAME, Pool


@dataclass(frozen=True)
class ForestRow:
    """One line of the plot: a run (or the pool) and its paired difference, in points."""

    label: str  # the y-axis text
    delta: float
    lo: float
    hi: float
    pooled: bool  # the pool's own line (drawn apart)
    counted: bool  # whether the pool counts this run


@dataclass(frozen=True)
class PaperPoint:
    """The paper's Delta for one of its models beside one of our lines, in points."""

    row: int  # index of the `ForestRow` it stands beside
    model: str
    delta: float


def _strength(detail: str) -> str:
    return detail.split(", ")[1] if detail.count(", ") >= 2 else ""


def forest_rows(pool: Pool) -> tuple[list[ForestRow], list[PaperPoint]]:
    """The plot's lines, the runs in the pool's order and the pool last, and the paper's points
    beside every run on a task the paper's main tables hold at the pool's config."""
    rows, points = [], []
    for r in pool.runs:
        e, run = r.estimate, r.run
        task = run.task
        paper = [
            line
            for line in (main_lines(_strength(run.detail)) if _strength(run.detail) else ())
            if line.dataset == task and pool.label in MAIN_CONFIGS
        ]
        where = "" if paper else " (no paper number)"
        mark = "" if r.left_out is None else " (not pooled)"
        label = f"{run.name}: {task}, {run.detail.replace('`', '')}{where}{mark}"
        rows.append(ForestRow(label, 100 * e.delta, 100 * e.lo, 100 * e.hi, False, not r.left_out))
        index = MAIN_CONFIGS.index(pool.label) if paper else 0
        points += [PaperPoint(len(rows) - 1, line.model, line.delta[index]) for line in paper]
    if pool.pooled is not None:
        e = pool.pooled
        label = f"{POOL_NAME}: {e.strata} runs, {e.questions} questions"
        rows.append(ForestRow(label, 100 * e.delta, 100 * e.lo, 100 * e.hi, True, True))
    return rows, points
