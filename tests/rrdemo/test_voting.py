"""Plurality with a seeded, position-free tie-break, and vote keys that group equal answers."""

from __future__ import annotations

from rrdemo.voting import derive_seed, grouped_keys, plurality


def test_plurality_counts_readable_answers_and_abstentions() -> None:
    result = plurality(["(B)", None, "(B)", "(C)"], tie_seed=0)
    assert (result.winner, result.counts, result.tied, result.abstained) == (
        "(B)",
        {"(B)": 2, "(C)": 1},
        (),
        1,
    )
    assert plurality([None, None], tie_seed=0).winner is None


def test_a_tie_is_broken_by_the_seed_not_by_order() -> None:
    for seed in range(20):
        a = plurality(["(A)", "(B)"], tie_seed=seed)
        b = plurality(["(B)", "(A)"], tie_seed=seed)
        assert a.winner == b.winner and a.tied == ("(A)", "(B)")
    assert {plurality(["(A)", "(B)"], tie_seed=s).winner for s in range(20)} == {"(A)", "(B)"}


def test_derived_seeds_are_stable_and_differ_per_part() -> None:
    assert derive_seed(0, "RRMaj", "q1") == derive_seed(0, "RRMaj", "q1")
    assert derive_seed(0, "RRMaj", "q1") != derive_seed(0, "MAJ", "q1")
    assert 0 <= derive_seed(7, "x") < 2**63


def test_answers_the_scorer_calls_equal_vote_under_one_key() -> None:
    keys = grouped_keys(["10", "10.0", None, "7"], key=str, same=lambda a, b: float(a) == float(b))
    assert keys == ["10", "10", None, "7"]
    assert grouped_keys(["5"], key=str, same=lambda a, b: a == b, anchors=["5"]) == ["5"]
