"""One click after an in-app experiment: the sweep log becomes a pending leaderboard submission."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard.db import open_leaderboard
from leaderboard.service import board_rows
from rrdemo.errors import RRError
from ui.experiments_tab import submit_sweep

LOG = (
    Path(__file__).resolve().parent.parent / "assets" / "experiment_small.jsonl"
)  # a real sweep log


def test_a_sweep_log_is_submitted_once_and_waits_for_approval():
    first = submit_sweep(str(LOG), "tester")
    assert first.startswith("Accepted as submission #") and "pending" in first
    again = submit_sweep(str(LOG), "tester")
    assert again.startswith("Already present")
    factory = open_leaderboard()
    with factory() as session:
        mine = [r for r in board_rows(session, include_all=True) if r.status == "pending"]
        public = board_rows(session)
    assert len(mine) == 8  # 2 tasks x 4 configs at M = N
    assert all(r.status == "approved" for r in public) and not any(
        r.status == "pending" for r in public
    )


@pytest.mark.parametrize(
    ("path", "name", "message"),
    [(None, "tester", "run a sweep first"), (str(LOG), "  ", "type your name")],
)
def test_submit_without_a_log_or_a_name_is_refused(path, name, message):
    with pytest.raises(RRError, match=message):
        submit_sweep(path, name)
