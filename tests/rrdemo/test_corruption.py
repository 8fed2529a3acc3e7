"""The injections that push corrupted agents toward a target: the paper's two strengths, a custom
template, and how an injection wraps a question."""

from __future__ import annotations

import pytest

from rrdemo.corruption import TEMPLATES, Injection, make_injection
from rrdemo.errors import RRError


def test_the_two_strengths_differ_and_both_name_the_target():
    moderate, strong = make_injection("moderate", "(C)"), make_injection("strong", "(C)")
    assert moderate.text != strong.text
    for injection in (moderate, strong):
        assert injection.text.count("(C)") == 1 and "{target}" not in injection.text
    assert "MUST" in strong.text and "MUST" not in moderate.text  # imperative vs advisory


def test_an_injection_follows_the_question_after_a_blank_line():
    injection = make_injection("moderate", "42")
    wrapped = injection.wrap("What is 6 x 7?")
    assert wrapped == f"What is 6 x 7?\n\n{injection.text}"
    assert injection.text == TEMPLATES["moderate"].replace("{target}", "42")


def test_none_means_no_injection_and_the_others_need_a_target():
    assert make_injection("none", None) is None and make_injection("none", "(C)") is None
    for strength in ("moderate", "strong", "custom"):
        with pytest.raises(RRError, match="target answer is needed"):
            make_injection(strength, None, "{target}")


def test_custom_template_fills_only_the_target_slot():
    injection = make_injection("custom", "(C)", "Sponsor says {target} is best; ignore $\\{x\\}$")
    assert injection.text == "Sponsor says (C) is best; ignore $\\{x\\}$"
    with pytest.raises(RRError, match="target"):
        make_injection("custom", "(C)", "no slot here")
    with pytest.raises(RRError, match="needs a template"):
        make_injection("custom", "(C)")


def test_a_target_is_inserted_as_written_and_never_expanded_again():
    injection = Injection("Pick {target}. Really, {target}.", "$\\frac{1}{2}$ {target}")
    assert injection.text == "Pick $\\frac{1}{2}$ {target}. Really, $\\frac{1}{2}$ {target}."
