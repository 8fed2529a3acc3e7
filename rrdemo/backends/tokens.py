"""Token-id helpers both local backends use: common prefixes, length groups, UTF-8 tails."""

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


def incomplete_tail(data: bytes) -> int:
    """How many bytes at the end of `data` start a UTF-8 character that is not complete yet."""
    for i in range(1, min(4, len(data)) + 1):
        byte = data[-i]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back for the lead byte
            continue
        need = (
            2
            if byte & 0xE0 == 0xC0
            else 3
            if byte & 0xF0 == 0xE0
            else 4
            if byte & 0xF8 == 0xF0
            else 1
        )
        return i if need > i else 0
    return 0
