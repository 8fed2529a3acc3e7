"""bench.efficiency: the ideal time of a slice, its table, and a real (tiny) experiment slice run
one unit at a time and in a flow."""

from __future__ import annotations

import pytest

from bench.efficiency import experiment_slice, ideal_seconds, table


def test_the_ideal_time_uses_the_rate_of_the_nearest_measured_batch_size() -> None:
    rates = {1: 10.0, 5: 40.0, 16: 80.0}
    assert ideal_seconds(400, 1000, 5, rates, 500.0) == pytest.approx(10 + 2)
    assert ideal_seconds(800, 0, 12, rates, 500.0) == pytest.approx(10)  # 16 is nearest
    assert ideal_seconds(10, 0, 3, {1: 10.0, 5: 50.0}, 1.0) == pytest.approx(
        0.2
    )  # a tie: more rows


def test_the_table_shows_each_slice_with_its_efficiency() -> None:
    row = {"slice": "calibration (flow of 16)", "rows": 16, "units": 32, "decode": 3200,
           "prefill": 4000, "ideal_s": 120.4, "measured_s": 150.2, "efficiency": 0.8016}  # fmt: skip
    lines = table([row]).splitlines()
    assert lines[0].startswith("| slice |") and len(lines) == 3
    assert (
        lines[2] == "| calibration (flow of 16) | 16 | 32 | 3,200 | 4,000 | 120 s | 150 s | 0.80 |"
    )


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_an_experiment_slice_runs_its_units_and_counts_their_tokens(real_pool, workers) -> None:
    from tests.support.llama import llama

    llama(real_pool, "smollm2")  # skips without llama-cpp-python
    tiny = {"models": "smollm2", "tasks": "logic3", "k": 4, "max_tokens": 8, "m_star": 2}
    found = experiment_slice(real_pool, 2, workers, configs="1c1t", **tiny)
    assert found["units"] == 2 and found["rows"] == 5 * workers
    # MAJ: 2 answers of at most 8 tokens (+1 for an EOS), RRMaj: 2 trajectories of at most 8
    assert 0 < found["decode"] <= 2 * 2 * 2 * 9 and found["prefill"] > 0
    assert found["measured_s"] > 0
