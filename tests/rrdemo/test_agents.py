"""Agents: one per seat, a model and the prompt its role gives it (corrupted seats read the
injection appended to the question, honest ones the clean question)."""

from __future__ import annotations

import pytest

from rrdemo.agents import backend_for, build_agents
from rrdemo.config import AgentSpec, RunConfig
from rrdemo.corruption import make_injection
from rrdemo.errors import RRError
from tests.support.fakes import FakeBackend, FakePool

QUESTION = "Which one is right? (A) w (B) x (C) y"


class Recording:
    """A model source that records how each backend is asked for."""

    def __init__(self) -> None:
        self.asked: list[tuple] = []

    def get(self, name, revision=None, **engine):
        self.asked.append((name, revision, engine))
        return FakeBackend(name, lambda prompt: "")


def test_corrupted_seats_read_the_injection_and_honest_ones_the_clean_question():
    pool = FakePool(FakeBackend("a", str), FakeBackend("b", str))
    config = RunConfig(agents=(AgentSpec("a"), AgentSpec("b", True), AgentSpec("a", True)))
    injection = make_injection("strong", "(C)")
    agents = build_agents(config, pool, QUESTION, injection)
    assert [(a.index, a.model, a.corrupted) for a in agents] == [
        (0, "a", False),
        (1, "b", True),
        (2, "a", True),
    ]
    render = pool.backends["a"].render_prompt
    assert agents[0].prompt == render(QUESTION)
    assert agents[1].prompt == agents[2].prompt == render(injection.wrap(QUESTION))
    assert injection.text not in agents[0].prompt


def test_without_an_injection_every_seat_reads_the_clean_question():
    pool = FakePool(FakeBackend("a", str))
    config = RunConfig(agents=(AgentSpec("a", True), AgentSpec("a")), strength="none")
    prompts = {a.prompt for a in build_agents(config, pool, QUESTION, None)}
    assert prompts == {pool.backends["a"].render_prompt(QUESTION)}


def test_an_empty_question_is_refused():
    config = RunConfig(agents=(AgentSpec("a"),))
    with pytest.raises(RRError, match="the question is empty"):
        build_agents(config, FakePool(FakeBackend("a", str)), "  \n", None)


def test_a_question_too_long_for_the_models_context_names_the_model_and_l():
    backend = FakeBackend("small", str)
    prompt_tokens = backend.count_tokens(backend.render_prompt(QUESTION))
    config = RunConfig(agents=(AgentSpec("small"),), k=4, max_tokens=8)
    backend.max_context = prompt_tokens + 8  # exactly enough
    assert len(build_agents(config, FakePool(backend), QUESTION, None)) == 1
    backend.max_context = prompt_tokens + 7
    with pytest.raises(
        RRError, match=r"too long for small: .* L=8 .* holds " + str(prompt_tokens + 7)
    ):
        build_agents(config, FakePool(backend), QUESTION, None)


def test_the_engine_is_named_to_the_source_only_when_it_is_not_the_default():
    source = Recording()
    backend_for(source, AgentSpec("m", revision="v1"))
    backend_for(source, AgentSpec("m", backend="llamacpp"))
    assert source.asked == [("m", "v1", {}), ("m", None, {"backend": "llamacpp"})]
