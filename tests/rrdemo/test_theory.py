"""The stability bound of appendix B: the paper's worked example and its properties."""

from __future__ import annotations

import pytest

from rrdemo.errors import RRError
from rrdemo.theory import (
    adversarial_drift,
    bound_curve,
    largest_k,
    restoration,
    rho_max,
    stability_bound,
)


def _summed_drift(alpha: float, k: int, v0: float = 1.0) -> float:
    """Delta V_C(K) by its definition: sum over K tokens of delta(V) = alpha V, V growing each token."""
    v, total = v0, 0.0
    for _ in range(k):
        step = alpha * v
        total += step
        v += step
    return total


def _contracted(gamma: float, k: int, v0: float = 1.0) -> float:
    """R_H(K) by its definition: V0 minus what is left after K contractions by (1 - gamma)."""
    v = v0
    for _ in range(k):
        v *= 1 - gamma
    return v0 - v


def test_paper_worked_example() -> None:
    # Appendix B: R_H(100) ~ 0.952, Delta V_C(100) ~ 0.490, rho_max(100) ~ 66.0%.
    bound = stability_bound(0.03, 0.004, 100)
    assert bound.restoration == pytest.approx(0.952, abs=5e-4)
    assert bound.adversarial == pytest.approx(0.490, abs=1e-3)  # paper truncates 0.4906
    assert round(bound.rho_max * 100, 1) == 66.0
    assert bound.super_majority
    # "safely tolerating rho = 60% in a 3c2t ensemble"
    assert bound.rho_max > 3 / 5


@pytest.mark.parametrize("gamma,alpha", [(0.03, 0.004), (0.1, 0.02), (0.005, 0.0001)])
@pytest.mark.parametrize("k", [1, 7, 100, 513])
def test_closed_forms_match_the_definitions(gamma: float, alpha: float, k: int) -> None:
    assert restoration(gamma, k) == pytest.approx(_contracted(gamma, k), rel=1e-9)
    assert adversarial_drift(alpha, k) == pytest.approx(_summed_drift(alpha, k), rel=1e-9)
    r, d = _contracted(gamma, k), _summed_drift(alpha, k)
    assert rho_max(gamma, alpha, k) == pytest.approx((1 + d / r) ** -1, rel=1e-9)


@pytest.mark.parametrize("gamma,alpha", [(0.03, 0.004), (0.01, 0.01), (0.2, 0.001), (0.02, 0.05)])
def test_super_majority_iff_drift_below_restoration(gamma: float, alpha: float) -> None:
    for k in (1, 5, 50, 100, 300, 1000):
        b = stability_bound(gamma, alpha, k)
        assert b.super_majority == (b.adversarial < b.restoration)
        # The bound is exactly the rho at which both sides of the race balance.
        assert (1 - b.rho_max) * b.restoration == pytest.approx(b.rho_max * b.adversarial)


def test_bound_shrinks_with_k_and_collapses_for_long_turns() -> None:
    curve = bound_curve(0.03, 0.004, range(1, 3001, 7))
    values = [b.rho_max for b in curve]
    assert all(a >= b - 1e-12 for a, b in zip(values, values[1:], strict=False))
    assert values[0] > 0.85  # short turns: near gamma / (gamma + alpha)
    assert values[-1] < 1e-3  # standard generation (K -> infinity) tolerates almost nothing
    assert stability_bound(0.03, 0.004, 1_000_000).rho_max == 0.0  # overflowed drift -> 0


def test_no_drift_tolerates_everything_and_more_drift_tolerates_less() -> None:
    assert rho_max(0.03, 0.0, 100) == 1.0
    assert rho_max(0.03, 0.008, 100) < rho_max(0.03, 0.004, 100)
    assert rho_max(0.06, 0.004, 100) > rho_max(0.03, 0.004, 100)


def test_largest_k_is_the_crossing_point() -> None:
    k = largest_k(0.03, 0.004, 0.6)
    assert k is not None
    assert rho_max(0.03, 0.004, k) > 0.6 >= rho_max(0.03, 0.004, k + 1)
    assert k >= 100  # the paper: K = 100 survives 3c2t
    assert largest_k(0.03, 0.004, 0.95) is None  # even K = 1 gives ~0.88
    assert largest_k(0.03, 0.0, 0.9, k_limit=500) == 500


@pytest.mark.parametrize(
    "args,needle",
    [
        ((0.0, 0.004, 100), "gamma_H"),
        ((1.0, 0.004, 100), "gamma_H"),
        ((float("nan"), 0.004, 100), "gamma_H"),
        ((0.03, -0.1, 100), "drift"),
        ((0.03, float("inf"), 100), "drift"),
        ((0.03, 0.004, 0), "K .* at least 1"),
        ((0.03, 0.004, 2.5), "K .* whole number"),
        ((0.03, 0.004, True), "K .* whole number"),
        ((0.03, 0.004, "ten"), "K .* whole number"),
        ((0.03, 0.004, 10**7), "K .* between 1 and"),
    ],
)
def test_bad_inputs_raise_clear_errors(args: tuple, needle: str) -> None:
    with pytest.raises(RRError, match=needle):
        stability_bound(*args)
