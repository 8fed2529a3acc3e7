"""bench.efficiency's arithmetic: the ideal time of a slice and the slice read from a real log."""

from __future__ import annotations

import json

import pytest

from bench.efficiency import LOG, experiment_slice, ideal_seconds


def test_the_ideal_time_uses_the_rate_of_the_nearest_measured_batch_size() -> None:
    rates = {1: 10.0, 5: 40.0, 16: 80.0}
    assert ideal_seconds(400, 1000, 5, rates, 500.0) == pytest.approx(10 + 2)
    assert ideal_seconds(800, 0, 12, rates, 500.0) == pytest.approx(10)  # 16 is nearest
    assert ideal_seconds(10, 0, 3, {1: 10.0, 5: 50.0}, 1.0) == pytest.approx(
        0.2
    )  # a tie: more rows


def test_an_experiment_slice_sums_the_logged_units_per_method() -> None:
    rows = {row["method"]: row for row in experiment_slice(LOG, 3)}
    done = [json.loads(line) for line in LOG.read_text().splitlines() if '"type": "done"' in line
            or '"type":"done"' in line][:3]  # fmt: skip
    for method in ("MAJ", "RRMaj"):
        row = rows[method]
        assert row["rows"] == 5 and row["units"] == 3
        assert row["decode"] == sum(d["compute"][method]["decode_tokens"] for d in done)
        assert row["measured_s"] == pytest.approx(sum(d["compute"][method]["wall_s"] for d in done))
