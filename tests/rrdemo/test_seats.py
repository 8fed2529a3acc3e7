"""The one agent-list syntax (`parse_agents`) and corrupted seats."""

from __future__ import annotations

import pytest

from rrdemo.errors import RRError
from rrdemo.seats import parse_agents, with_corrupted_seats


def test_one_agent_list_syntax_lines_roles_stars_and_comments() -> None:
    lines = parse_agents("smollm2, corrupted\n# a comment\ngemma3-270m\n  smollm2 , honest ")
    stars = parse_agents("smollm2*, gemma3-270m, smollm2")
    expected = [("smollm2", True), ("gemma3-270m", False), ("smollm2", False)]
    assert [(a.model, a.corrupted) for a in lines] == expected
    assert [(a.model, a.corrupted) for a in stars] == expected


@pytest.mark.parametrize("role", ["c", "corrupted", "adversarial", "C"])
def test_every_corrupted_role_word_counts_as_corrupted(role: str) -> None:
    """The Arena's rho line once counted only lines containing "corrupt": "smollm2, c" read 0c."""
    (agent,) = parse_agents(f"smollm2, {role}")
    assert agent.corrupted


@pytest.mark.parametrize(
    "text", ["", "# only a comment", "corrupted, smollm2", "smollm2*, honest", ","]
)
def test_bad_agent_lists_are_one_message(text: str) -> None:
    with pytest.raises(RRError):
        parse_agents(text)


def test_corrupted_seats_are_exactly_the_listed_ones() -> None:
    agents = parse_agents("smollm2*, smollm2, smollm2")
    assert [a.corrupted for a in with_corrupted_seats(agents, "1, 2")] == [False, True, True]
    for bad in ("x", "3"):
        with pytest.raises(RRError):
            with_corrupted_seats(agents, bad)
