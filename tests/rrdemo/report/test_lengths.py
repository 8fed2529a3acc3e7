"""Answer lengths per condition and method, and the share cut at L."""

from __future__ import annotations

from dataclasses import replace

from rrdemo.report.lengths import answer_lengths, lengths_md
from tests.support.outcomes import row


def test_lengths_group_by_condition_and_method_and_count_the_cuts() -> None:
    base = row(3, 5, "q0", "MAJ", 0, "(B)", corrupted=False)
    made = [
        replace(base, trajectory=j, n_tokens=n, cut=n == 64) for j, n in enumerate([10, 20, 64, 30])
    ]
    made += [replace(base, method="RRMaj", trajectory=j, n_tokens=50) for j in range(3)]
    made += [replace(base, c=0, trajectory=0, n_tokens=5)]
    rows = {(r.label, r.method): r for r in answer_lengths(made)}
    maj = rows[("3c2t", "MAJ")]
    assert (maj.n, maj.median, maj.longest, maj.cut) == (4, 25, 64, 1)
    assert maj.cut_share == 0.25
    assert (rows[("3c2t", "RRMaj")].n, rows[("3c2t", "RRMaj")].cut) == (3, 0)
    assert rows[("0c5t", "MAJ")].n == 1
    assert "25.0% (1)" in lengths_md(list(rows.values()))
