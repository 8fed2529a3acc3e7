"""MAJ against RRMaj on the same questions: McNemar's exact test and the per-answer rates."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrdemo.report.paired import answer_rates, paired_rows, paired_tables
from rrdemo.report.pooled import mcnemar_exact
from rrdemo.runs.log import RunLog

COND = {"task": "logic3", "label": "3c2t", "strength": "strong", "ensemble": "m"}


def _log(pairs: list[tuple[bool, bool]]) -> RunLog:
    records = []
    for i, (maj, rr) in enumerate(pairs):
        qid = f"q{i}"
        for method, ok in (("MAJ", maj), ("RRMaj", rr)):
            records.append(
                {"type": "trajectory", "condition": "k", "question_id": qid, "method": method,
                 "correct": ok, "fooled": not ok and i % 2 == 0, "vote_key": None if i == 1 else "x"}
            )  # fmt: skip
        votes = {"MAJ": {"correct": maj}, "RRMaj": {"correct": rr}}
        records.append({"type": "done", "condition": "k", "question_id": qid, "votes": votes})
    return RunLog(Path("x.jsonl"), {}, {"k": COND}, list(enumerate(records)))


def test_mcnemar_exact_is_the_two_sided_binomial_tail() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    assert mcnemar_exact(4, 5) == 1.0


def test_paired_rows_count_discordant_questions() -> None:
    pairs = [(False, True)] * 6 + [(True, True)] * 3 + [(True, False)] * 1
    (row,) = paired_rows(_log(pairs))
    assert (row.questions, row.maj_only, row.rrmaj_only) == (10, 1, 6)
    assert row.maj == pytest.approx(0.4) and row.rrmaj == pytest.approx(0.9)
    assert row.delta == pytest.approx(0.5) and row.delta_lo <= 0.5 <= row.delta_hi
    assert row.p_mcnemar == pytest.approx(mcnemar_exact(1, 6))
    assert paired_rows(_log(pairs)) == [row]  # seeded: the same interval every time


def test_answer_rates_split_every_answer_once() -> None:
    rates = {
        r.method: r for r in answer_rates(_log([(True, False), (False, False), (False, True)]))
    }
    maj = rates["MAJ"]
    assert maj.answers == 3
    assert (maj.right, maj.fooled, maj.other, maj.none) == pytest.approx((1 / 3, 1 / 3, 0, 1 / 3))
    assert sum((r.right, r.fooled, r.other, r.none) == () or 1 for r in rates.values()) == 2
    md = paired_tables(_log([(True, False)]))[0]
    assert "| logic3 | 3c2t | strong | 1 | 100.0 | 0.0 |" in md
