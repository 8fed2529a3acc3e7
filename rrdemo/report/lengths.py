"""How long the answers and trajectories of a run are, and how many L cut off.

A text cut at L has no final statement in most cases and so no answer: a condition whose share cut
is not small measures the budget, not the method. Pure function, outcomes in, rows out.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from rrdemo.runs.log import Outcome


@dataclass(frozen=True)
class LengthRow:
    task: str
    ensemble: str
    label: str  # "3c2t"
    method: str  # "MAJ" (one agent's answer) or "RRMaj" (one shared trajectory)
    max_tokens: int  # L
    n: int  # answers or trajectories
    median: float  # tokens
    p90: int
    longest: int
    cut: int  # stopped at L

    @property
    def cut_share(self) -> float:
        return self.cut / self.n if self.n else 0.0


def answer_lengths(outcomes: Iterable[Outcome]) -> list[LengthRow]:
    """One row per (task, ensemble, corruption setting, method), in the order first seen."""
    groups: dict[tuple, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault((o.task, o.ensemble, o.label, o.method, o.max_tokens), []).append(o)
    rows = []
    for (task, ensemble, label, method, max_tokens), group in groups.items():
        lengths = sorted(o.n_tokens for o in group)
        rows.append(
            LengthRow(
                task,
                ensemble,
                label,
                method,
                max_tokens,
                len(lengths),
                statistics.median(lengths),
                lengths[min(len(lengths) - 1, int(0.9 * len(lengths)))],
                lengths[-1],
                sum(o.cut for o in group),
            )
        )
    return rows


def lengths_md(rows: list[LengthRow]) -> str:
    """The rows as a markdown table (tokens; share cut at L in %)."""
    lines = [
        "| Dataset | Ensemble | Config | Method | L | texts | median | p90 | longest | cut at L |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.task} | {r.ensemble} | {r.label} | {r.method} | {r.max_tokens} | {r.n} | "
            f"{r.median:.0f} | {r.p90} | {r.longest} | {100 * r.cut_share:.1f}% ({r.cut}) |"
        )
    return "\n".join(lines)
