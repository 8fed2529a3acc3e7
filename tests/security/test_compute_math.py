"""A visitor's text cannot make sympy freeze the server: against the real app on a real port,
a MATH-500 run whose target is a power tower is refused in one sentence, and a run whose agents
all write one (the custom-template route) ends with those answers unparsed while a second client
is answered throughout (the third probe: `9^{9^{8}}` froze every request for 55 s, `9^{9^{9}}`
until the server was killed)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from rrdemo.tasks.mathanswers import equivalent, extract_math, math_vote_key
from tests.support.fakes import FakeBackend, FakePool
from tests.support.served import ServedApp, app_client, serve_app
from ui.state import ARENA_FIELDS, ArenaRequest

TOWERS = ("9^{9^{8}}", "9^{9^{9}}")
WRITES_A_TOWER = "Using the identity, we find $9^{9^{9}}$. The answer is $\\boxed{9^{9^{9}}}$."
RUN = ArenaRequest(
    model="tower", n=3, c=2, k=8, m=0, max_tokens=16, task="math500", question_index=0,
)  # fmt: skip
ANSWER_S = 10.0  # a second client's cheap call is answered within this, whatever runs


def test_the_vote_key_of_a_power_tower_returns_within_2_s() -> None:
    for tower in TOWERS:
        started = time.monotonic()
        assert math_vote_key(tower) == f"tex:{tower}"  # unparsed: its normal form
        assert extract_math(f"The answer is $\\boxed{{{tower}}}$.") is None
        assert not equivalent("5", tower)
        assert time.monotonic() - started < 2.0


def test_ordinary_answers_keep_their_keys() -> None:
    assert math_vote_key("\\frac{1}{2}") == math_vote_key("0.5") == "sym:Rational(1, 2)"
    assert math_vote_key("2^{10}") == "sym:Integer(1024)"
    assert math_vote_key("x^2+7x+10") == math_vote_key("x^{2}+7x+10")


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[ServedApp]:
    """The app with scripted agents that all box a power tower (what a custom template that
    tells them to would make them write)."""
    pool = FakePool(FakeBackend("tower", lambda prompt: WRITES_A_TOWER))
    yield from serve_app(pool, tmp_path_factory.mktemp("tower"))


def _args(request: ArenaRequest) -> list:
    return [getattr(request, name) for name in ARENA_FIELDS]


def _answered_within(client, seconds: float) -> float:
    started = time.monotonic()
    _, text = client.predict(0.03, 0.4, 100, 1000, api_name="/theory")
    elapsed = time.monotonic() - started
    assert "66.0%" in text and elapsed < seconds, elapsed
    return elapsed


def test_a_power_tower_target_is_refused_in_one_sentence(served) -> None:
    from gradio_client.exceptions import AppError

    client = app_client(served.url, download_files=False)
    for tower in TOWERS:
        started = time.monotonic()
        with pytest.raises(AppError) as refused:
            client.predict(*_args(replace(RUN, target=tower)), api_name="/run")
        message = str(refused.value)
        assert f"the target: the answer '{tower}' is not read: it holds an exponent" in message
        assert "Traceback" not in message and "/" not in message.replace("9^{9^", "")
        assert time.monotonic() - started < 30  # wide: the call's round trip on a loaded machine
        _answered_within(client, ANSWER_S)


def test_agents_writing_a_power_tower_leave_the_server_answering(served) -> None:
    attacker = app_client(served.url, download_files=False)
    other = app_client(served.url, download_files=False)
    job = attacker.submit(*_args(RUN), api_name="/run")
    latencies = [_answered_within(other, ANSWER_S)]
    while not job.done():
        latencies.append(_answered_within(other, ANSWER_S))
    job.result(timeout=120)  # the run ends: its answers count as unparsed
    assert latencies and max(latencies) < ANSWER_S
    _answered_within(other, ANSWER_S)
