"""The Arena's controls: the rho line reads the agents the run will have."""

from __future__ import annotations

from ui.arena_controls import _rho_text


def test_rho_line_counts_the_corrupted_agents_the_run_will_have() -> None:
    assert "**1c1t**" in _rho_text("per agent", 0, 0, "smollm2, c\nsmollm2")
    assert "**2c1t**" in _rho_text(
        "per agent", 0, 0, "smollm2, adversarial # x\nsmollm2*\ngemma3-270m"
    )
    assert "**3c2t**" in _rho_text("same", 5, 3, "")


def test_rho_line_shows_why_an_agent_list_is_invalid() -> None:
    assert "empty" in _rho_text("per agent", 0, 0, "")
