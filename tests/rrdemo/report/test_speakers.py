"""rrdemo.report.speakers: the final-speaker test on hand-built rows."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from rrdemo.report.speakers import final_speaker, openers
from tests.support.outcomes import GOLD, OTHER, TARGET, row, trap


# -- the final speaker -------------------------------------------------------------------------------
def _speaker_rows(clean_right, corrupt_right, n=60):
    rows = []
    for j in range(n):
        rows.append(
            row(2, 5, f"q{j}", "RRMaj", 0, GOLD if j < clean_right else TARGET, corrupted=False)
        )
        rows.append(
            row(2, 5, f"q{j}", "RRMaj", 1, GOLD if j < corrupt_right else TARGET, corrupted=True)
        )
    return rows


def test_final_speaker_fisher_test_separates_real_gaps_from_none():
    gap = final_speaker(_speaker_rows(54, 6))[0]
    assert (gap.clean_n, gap.corrupt_n) == (60, 60)
    assert gap.clean_acc == pytest.approx(0.9) and gap.corrupt_acc == pytest.approx(0.1)
    assert gap.delta == pytest.approx(0.8) and gap.p_value < 1e-6
    same = final_speaker(_speaker_rows(30, 30))[0]
    assert same.delta == 0.0 and same.p_value == pytest.approx(1.0)
    # bounds have no mixed speakers and are left out; MAJ rows are not trajectories
    assert final_speaker(trap(0) + trap(5)) == []


def test_final_speaker_with_one_empty_group_has_no_p_value():
    rows = [r for r in _speaker_rows(30, 30) if not r.corrupted]
    result = final_speaker(rows)[0]
    assert result.corrupt_n == 0 and math.isnan(result.p_value)


# -- who opened ----------------------------------------------------------------------------------------
def _opened(j, opener, mixed, key, c=3):
    base = row(c, 5, f"q{j}", "RRMaj", 0, key, corrupted=opener == "corrupted")
    return replace(base, opener=opener, mixed=mixed, fooled=key == TARGET)


def test_openers_split_trajectories_by_their_first_writer():
    rows = [
        _opened(j, "corrupted", False, TARGET) for j in range(6)
    ]  # closed before any honest turn
    rows += [_opened(j, "corrupted", True, GOLD if j < 8 else TARGET) for j in range(6, 10)]
    rows += [_opened(j, "honest", True, GOLD if j < 12 else OTHER) for j in range(10, 15)]
    rows += [replace(_opened(99, None, None, GOLD))]  # writers unknown: left out
    rows += [replace(r, method="MAJ") for r in rows[:3]]  # MAJ answers are not trajectories
    (result,) = openers(rows)
    assert (result.trajectories, result.corrupt_open_n, result.corrupt_only_n) == (15, 10, 6)
    assert result.corrupt_open_acc == pytest.approx(0.2)
    assert result.corrupt_open_fooled == pytest.approx(0.8)
    assert result.honest_open_n == 5 and result.honest_open_acc == pytest.approx(0.4)
    assert result.honest_open_fooled == 0.0
    # the bounds (c = 0 or N) have one role only and no opener split
    assert openers([replace(r, c=0) for r in rows] + [replace(r, c=5) for r in rows]) == []


def test_openers_with_no_honest_opener_have_no_rate():
    (result,) = openers([_opened(j, "corrupted", False, TARGET) for j in range(4)])
    assert result.honest_open_n == 0 and math.isnan(result.honest_open_acc)
