"""Token-id helpers of the local engines: common prefixes and length groups."""

from __future__ import annotations

import random

import pytest

from rrdemo.backends.tokens import by_length, common_prefix


def _naive_prefix(a, b) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def test_common_prefix_is_the_length_of_the_longest_shared_start():
    rng = random.Random(0)
    for _ in range(300):
        a = [rng.randrange(4) for _ in range(rng.randrange(40))]
        b = a[: rng.randrange(len(a) + 1)] + [rng.randrange(4) for _ in range(rng.randrange(40))]
        assert common_prefix(a, b) == common_prefix(b, a) == _naive_prefix(a, b)
    assert common_prefix([], [1, 2]) == 0 and common_prefix([5, 6], [5, 6]) == 2


def test_rows_are_prefilled_in_groups_of_similar_suffix_length():
    groups = by_length([50, 100, 150, 60, 55])
    assert sorted(i for g in groups for i in g) == [0, 1, 2, 3, 4]  # every row exactly once
    assert groups == [[0, 4, 3], [1, 2]]  # 50-60 together; 100 and 150 waste 20 % padded
    for group in groups:
        lengths = [[50, 100, 150, 60, 55][i] for i in group]
        assert max(lengths) * len(lengths) - sum(lengths) <= 0.25 * sum(lengths)
    assert by_length([7]) == [[0]] and by_length([10, 10, 11]) == [[0, 1, 2]]


@pytest.mark.parametrize("waste", [0.0, 0.25, 1.0])
def test_every_group_keeps_its_padding_under_the_waste_bound(waste):
    rng = random.Random(1)
    for _ in range(100):
        lengths = [rng.randrange(1, 200) for _ in range(rng.randrange(1, 12))]
        groups = by_length(lengths, waste)
        assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
        longest = [max(lengths[i] for i in g) for g in groups]
        assert longest == sorted(longest)  # shortest first
        for group in groups:
            sizes = [lengths[i] for i in group]
            assert max(sizes) * len(sizes) - sum(sizes) <= waste * sum(sizes) + 1e-9
