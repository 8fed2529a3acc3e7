"""rrdemo.report.speakers: the final-speaker test on hand-built rows."""

from __future__ import annotations

import math

import pytest

from rrdemo.report.speakers import final_speaker
from tests.support.outcomes import GOLD, TARGET, row, trap


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
