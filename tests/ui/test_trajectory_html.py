"""The pieces of a trajectory's HTML: each agent's hue."""

from __future__ import annotations

from ui import trajectory_html


def test_hues_separate_roles_and_agents() -> None:
    agents = [{"model": "m", "corrupted": i % 2 == 0} for i in range(7)]
    hues = [trajectory_html.agent_hue(i, agents) for i in range(7)]
    assert len(set(hues)) == 7
    assert not set(trajectory_html.HONEST_HUES) & set(trajectory_html.CORRUPTED_HUES)
    for i, hue in enumerate(hues):
        palette = (
            trajectory_html.CORRUPTED_HUES
            if agents[i]["corrupted"]
            else trajectory_html.HONEST_HUES
        )
        assert hue in palette
