"""MAJ vs RRMaj per adversary strategy: the main table grouped by strategy, and its formatting.

A sweep over `adversaries` gives conditions that differ only in the strategy. The other analyses
of a report read one strategy (`primary_outcomes`: "static" when the run has it); this table
shows every strategy side by side, one line per (ensemble, dataset, strength, K, config).
"""

from __future__ import annotations

from collections.abc import Iterable

from rrdemo.events import METHODS
from rrdemo.report.render import ci_text, csv_text, markdown_table
from rrdemo.report.stats import TRIALS
from rrdemo.report.tables import MainRow, main_table
from rrdemo.runs.log import Outcome


def strategies(outcomes: Iterable[Outcome]) -> list[str]:
    """The strategies a run holds, "static" first."""
    names = {o.adversary for o in outcomes}
    return sorted(names, key=lambda name: (name != "static", name))


def primary_outcomes(outcomes: list[Outcome]) -> list[Outcome]:
    """The outcomes of one strategy ("static" when present), for analyses that do not split by it."""
    names = strategies(outcomes)
    if len(names) <= 1:
        return outcomes
    return [o for o in outcomes if o.adversary == names[0]]


def main_table_by_adversary(
    outcomes: list[Outcome], seed: int = 0, trials: int = TRIALS
) -> list[tuple[str, MainRow]]:
    """The paper's main table computed separately for each strategy: (strategy, row) pairs."""
    return [
        (name, row)
        for name in strategies(outcomes)
        for row in main_table([o for o in outcomes if o.adversary == name], seed, trials)
    ]


def adversary_table_md(pairs: list[tuple[str, MainRow]]) -> str:
    """One line per strategy and corrupted config: MAJ, RRMaj and Δ with 95% intervals."""
    header = ["Ensemble", "Dataset", "Strength", "K", "Config", "Strategy", *METHODS, "Δ"]
    lines = []
    for name, row in pairs:
        for cell in row.cells:
            lines.append(
                (
                    (row.ensemble, row.task, row.strength, row.k, cell.label, name),
                    [ci_text(cell.maj), ci_text(cell.rrmaj), ci_text(cell.delta, signed=True)],
                )
            )
    lines.sort(key=lambda line: line[0][:5])  # strategies of one config next to each other
    return markdown_table(header, [[*map(str, key), *cells] for key, cells in lines])


def adversary_table_csv(pairs: list[tuple[str, MainRow]]) -> str:
    """The same lines as CSV (fractions in [0, 1])."""
    out = []
    for name, row in pairs:
        for cell in row.cells:
            for method, e in (("MAJ", cell.maj), ("RRMaj", cell.rrmaj), ("Delta", cell.delta)):
                out.append(
                    {
                        "ensemble": row.ensemble,
                        "dataset": row.task,
                        "strength": row.strength,
                        "k": row.k,
                        "config": cell.label,
                        "adversary": name,
                        "method": method,
                        "mean": e.mean,
                        "lo": e.lo,
                        "hi": e.hi,
                        "n_questions": e.n_questions,
                    }
                )
    return csv_text(out)
