"""Token-id helpers both local backends use: common prefixes and length groups."""

from __future__ import annotations

from collections.abc import Sequence


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two id lists (slices compare in C: bisect on them)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # invariant: a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def by_length(lengths: list[int], waste: float = 0.25) -> list[list[int]]:
    """Indices of `lengths` in groups of similar length, shortest first: a group is prefilled as
    one left-padded pass, and padding a short suffix to a long one costs compute (on a CPU more
    than the separate passes would), so a group's padding stays under `waste` of its tokens."""
    groups: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lengths.__getitem__):
        group = groups[-1] if groups else None
        if group is not None:
            total = sum(lengths[g] for g in group) + lengths[i]
            if lengths[i] * (len(group) + 1) - total <= waste * total:
                group.append(i)
                continue
        groups.append([i])
    return groups
