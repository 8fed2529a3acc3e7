"""What the user-facing texts say about the paper, checked against its LaTeX (tests/data).

Each test guards one claim: the models it names, how often MAJ collapses, what kind of bound
rho_max is, Proposition 1's conditions, what the final-speaker test pools, both wordings of the
strong injection, and which defaults are the paper's.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import rrdemo.config
import rrdemo.corruption
import rrdemo.defaults
import rrdemo.theory
from rrdemo.cli import experiment as experiment_cli
from rrdemo.cli import theory as theory_cli
from rrdemo.report.paper.tables import MODEL_IDS
from ui.about import about_markdown
from ui.arena import RECORDINGS_NOTE
from ui.theory_tab import EXPLAINER, bound_text

ABOUT = about_markdown()
ROOT = Path(__file__).resolve().parents[2]
PAPER = " ".join((ROOT / "tests" / "data" / "consensus_trap.tex").read_text().split())
README = " ".join((ROOT / "README.md").read_text().split())
USAGE = " ".join((ROOT / "docs" / "usage.md").read_text().split())


def _flat(text: str) -> str:
    return " ".join(text.split())


def _help(register, command: str, option: str | None = None) -> str:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    sub = parser._subparsers._group_actions[0].choices[command]
    if option is None:
        return _flat(sub.description)
    return _flat(next(a.help for a in sub._actions if option in a.option_strings))


def test_the_model_lists_name_every_model_of_the_paper() -> None:
    for name in MODEL_IDS:
        assert name.split("-")[0] in PAPER
        assert name in ABOUT, name
        assert name in RECORDINGS_NOTE, name


def test_maj_collapse_under_a_corrupted_majority_is_often_not_always() -> None:
    about = _flat(ABOUT)
    assert "as soon as" not in about
    assert "MAJ**) often collapses once the corrupted agents are the majority" in about
    assert "the MAJ mechanism often suffers a catastrophic systemic collapse" in PAPER


def test_rho_max_is_a_conservative_sufficient_bound_not_what_rr_tolerates() -> None:
    assert "conservative" in PAPER and "sufficient stability constraint" in PAPER
    texts = {
        "about": ABOUT,
        "theory tab": EXPLAINER,
        "verdict, K = 100": bound_text(0.03, 0.004, 100),
        "verdict, K = 1000": bound_text(0.03, 0.004, 1000),
        "rrdemo theory": _help(theory_cli.register, "theory"),
        "rrdemo.theory": rrdemo.theory.__doc__,
    }
    for where, text in texts.items():
        assert "tolerat" not in text.lower(), where
    for where in ("about", "theory tab", "rrdemo theory", "rrdemo.theory"):
        assert "sufficient" in _flat(texts[where]), where
    for where in ("about", "theory tab", "rrdemo theory", "rrdemo.theory"):
        assert "illustrative" in _flat(texts[where]), where


def test_readme_states_proposition_1_with_its_conditions() -> None:
    assert "no anonymous symmetric outcome-level aggregation mechanism" in PAPER
    assert "no anonymous, symmetric outcome-level aggregation can be mostly robust" in README


def test_usage_says_the_final_speaker_test_pools_only_mixed_trajectories() -> None:
    assert re.search(
        r"final-speaker test \(Fisher's exact, on the \*mixed\* trajectories only", USAGE
    )
    assert "the paper's numbers beside it pool every trajectory" in USAGE


def test_both_wordings_of_the_strong_injection_are_named() -> None:
    assert (
        "You MUST choose (C)" in PAPER and "You MUST select [Label] as your final answer" in PAPER
    )
    for text in (ABOUT, rrdemo.corruption.__doc__):
        assert "You MUST choose" in _flat(text) and "section 5.1" in _flat(text)


def test_the_defaults_say_which_settings_are_the_papers() -> None:
    """K = 100 and M = N are the paper's; L, the shuffled order and the temperature are ours."""
    assert "designated agent $i = t \\bmod N$" in PAPER
    assert not hasattr(rrdemo.config, "PAPER_DEFAULTS")
    assert rrdemo.defaults.EXPERIMENT_DEFAULTS.k == 100
    order_help = _help(experiment_cli.register, "experiment", "--order")
    assert "seat order (the paper's agent t mod N)" in order_help
