"""The paper's stability bound for token-level round-robin (appendix B, Theorem 1).

Over one turn of K tokens an honest agent contracts the error potential V by at least
R_H(K) = [1 - (1 - gamma_H)^K] V(h_t0), while a corrupted agent can add at most
Delta V_C(K) = sum_{k<K} delta(V(h_t0+k)). RR stays Lyapunov stable while
(1 - rho) R_H(K) > rho Delta V_C(K), i.e. (a sufficient, conservative condition: from the
worst-case drift) for every corruption ratio below

    rho_max(K) = (1 + Delta V_C(K) / R_H(K))^-1.

With the paper's compounding drift delta(V) = alpha V the potential grows by a factor (1 + alpha)
per corrupted token, so Delta V_C(K) = V(h_t0) [(1 + alpha)^K - 1] and V(h_t0) cancels.
The paper's illustrative parameters (gamma_H = 0.03, alpha = 0.004, K = 100) give R_H = 0.952, Delta V_C = 0.490
and rho_max = 66.0%. Pure functions, no UI.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from rrdemo.errors import RRError
from rrdemo.settings import whole_number

MAX_K = 1_000_000  # longer turns than any generation budget; keeps the powers finite

# The paper's worked example (appendix B).
PAPER_GAMMA_H = 0.03
PAPER_DRIFT = 0.004
PAPER_K = 100


@dataclass(frozen=True)
class StabilityBound:
    """The bound at one chunk size K, with both sides of the race it compares."""

    k: int  # K: tokens per RR turn
    gamma_h: float  # honest spectral gap: fraction of the error removed per honest token
    drift: float  # alpha: relative growth of the error per corrupted token, delta(V) = alpha V
    restoration: float  # R_H(K) / V(h_t0) = 1 - (1 - gamma_H)^K
    adversarial: float  # Delta V_C(K) / V(h_t0) = (1 + alpha)^K - 1
    rho_max: float  # the largest corruption ratio for which the sufficient bound holds

    @property
    def super_majority(self) -> bool:
        """Whether the sufficient bound covers a corrupted majority (rho > 0.5)."""
        return self.rho_max > 0.5

    def to_dict(self) -> dict:
        return {**asdict(self), "super_majority": self.super_majority}


def _check(gamma_h: float, drift: float) -> None:
    if not isinstance(gamma_h, int | float) or not math.isfinite(gamma_h):
        raise RRError(f"gamma_H must be a number in (0, 1), got {gamma_h!r}")
    if not 0 < gamma_h < 1:
        raise RRError(f"gamma_H (honest spectral gap) must be in (0, 1), got {gamma_h}")
    if not isinstance(drift, int | float) or not math.isfinite(drift) or drift < 0:
        raise RRError(
            f"the drift rate alpha must be a number >= 0 (0.004 = 0.4% per token), got {drift!r}"
        )


def _check_k(k: int) -> int:
    k = whole_number(k, "K (tokens per turn)", minimum=1)
    if k > MAX_K:
        raise RRError(f"K (tokens per turn) must be between 1 and {MAX_K}, got {k}")
    return k


def restoration(gamma_h: float, k: int) -> float:
    """R_H(K) for V(h_t0) = 1: the error an honest turn of K tokens is guaranteed to remove."""
    _check(gamma_h, 0.0)
    k = _check_k(k)
    return -math.expm1(k * math.log1p(-gamma_h))


def adversarial_drift(drift: float, k: int) -> float:
    """Delta V_C(K) for V(h_t0) = 1: the sum over K tokens of the compounding drift alpha V.

    Each corrupted token adds alpha times the current potential, so after K tokens the potential
    is (1 + alpha)^K and the summed drift is (1 + alpha)^K - 1 (infinite once it overflows).
    """
    _check(0.5, drift)
    k = _check_k(k)
    try:
        return math.expm1(k * math.log1p(drift))
    except OverflowError:
        return math.inf


def stability_bound(gamma_h: float, drift: float, k: int) -> StabilityBound:
    """rho_max(K) = (1 + Delta V_C(K) / R_H(K))^-1 with both terms (see the module docstring)."""
    _check(gamma_h, drift)
    k = _check_k(k)
    r_h = restoration(gamma_h, k)
    d_c = adversarial_drift(drift, k)
    rho = 0.0 if math.isinf(d_c) else r_h / (r_h + d_c)
    return StabilityBound(k, float(gamma_h), float(drift), r_h, d_c, rho)


def rho_max(gamma_h: float, drift: float, k: int) -> float:
    """The largest corruption ratio rho for which RR with K tokens per turn stays stable."""
    return stability_bound(gamma_h, drift, k).rho_max


def bound_curve(gamma_h: float, drift: float, ks: Iterable[int]) -> list[StabilityBound]:
    """The bound at every K in `ks` (for plotting rho_max against K)."""
    return [stability_bound(gamma_h, drift, k) for k in ks]


def largest_k(gamma_h: float, drift: float, rho: float, k_limit: int = MAX_K) -> int | None:
    """The largest K <= k_limit whose sufficient bound still covers corruption ratio `rho`.

    rho_max(K) is non-increasing in K (restoration is concave in K, the drift convex), so a
    bisection finds the crossing. None when even K = 1 does not cover `rho`.
    """
    _check(gamma_h, drift)
    if not 0 <= rho < 1:
        raise RRError(f"the corruption ratio rho must be in [0, 1), got {rho}")
    k_limit = _check_k(k_limit)
    if rho_max(gamma_h, drift, 1) <= rho:
        return None
    if rho_max(gamma_h, drift, k_limit) > rho:
        return k_limit
    low, high = 1, k_limit  # rho_max(low) > rho >= rho_max(high)
    while high - low > 1:
        mid = (low + high) // 2
        if rho_max(gamma_h, drift, mid) > rho:
            low = mid
        else:
            high = mid
    return low
