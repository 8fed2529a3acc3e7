"""The truth meter with scripted agents: readings per turn, their z, the events and the log."""

from __future__ import annotations

import math

import pytest

from rrdemo.agents import build_agents
from rrdemo.config import RunConfig, Sampling
from rrdemo.corruption import make_injection
from rrdemo.events import ChunkWritten, TurnMeasured
from rrdemo.fold import fold
from rrdemo.meter import logit, potential, reading
from rrdemo.protocols import majority_vote, round_robin, run_question
from rrdemo.runs.record import Unit, trajectory_record
from rrdemo.seats import homogeneous_agents
from tests.support.events import event_from_dict
from tests.support.fakes import QUESTION, FakeBackend, FakePool, FakeTask, obeys_injection

TASK = FakeTask()


def votes_reader(text: str, candidate: str) -> float:
    """p(letter) = 0.1 + 0.2 x the times "(letter)" was written after the prompt (capped)."""
    written = text.split("</user>\n", 1)[1]
    return min(0.1 + 0.2 * written.count(f"({candidate})"), 0.45)


def _run(n: int, c: int, **kw) -> list:
    settings = {"k": 3, "max_tokens": 12, "sampling": Sampling(temperature=0.0, seed=7)}
    config = RunConfig(agents=homogeneous_agents("obey", n, c), meter=True, **{**settings, **kw})
    backend = FakeBackend("obey", obeys_injection, reader=votes_reader)
    return list(run_question(config, QUESTION, TASK, FakePool(backend)))


def _z(text: str) -> float:
    p_gold, p_target = votes_reader(text, "B"), votes_reader(text, "C")
    return logit(p_gold) - logit(p_target)


def test_every_rr_turn_is_read_by_both_roles_with_the_expected_z():
    events = _run(5, 3, order="fixed")
    rr = fold(events).methods["RRMaj"]
    for j, tr in rr.trajectories.items():
        measures = tr.measures
        assert [m.turn for m in measures] == [-1, *range(len(tr.chunks))]
        assert measures[0].agent is None and measures[0].n_tokens == 0
        text = ""
        for m, chunk in zip(measures[1:], tr.chunks, strict=True):
            text += chunk.text
            assert (m.agent, m.corrupted) == (chunk.agent, chunk.corrupted)
            assert set(m.readers) == {"honest", "corrupted"}
            for r in m.readers.values():
                expected = _z("</user>\n" + text)
                assert r["z"] == pytest.approx(expected, abs=1e-3)
                assert r["p_gold"] + r["p_target"] <= 1
        # this fake's readers ignore their prompts: honest and corrupted read alike
        assert measures[-1].n_tokens == sum(c.n_tokens for c in tr.chunks), j


def test_a_corrupted_turn_writing_the_target_pushes_z_down():
    # fixed order, corrupted seats first: turn 0 writes "I will answer. The answer is (C)."
    events = _run(3, 2, order="fixed", k=7, max_tokens=14)
    rr = fold(events).methods["RRMaj"]
    zs = [m.readers["honest"]["z"] for m in rr.trajectories[0].measures]
    assert zs[0] == pytest.approx(0.0)
    assert zs[-1] < 0  # the corrupted writers wrote "(C)", the target: z fell below the start


def test_maj_answers_are_read_every_k_tokens_and_at_their_end():
    events = _run(3, 1)
    maj = fold(events).methods["MAJ"]
    for tr in maj.trajectories.values():
        counts = [m.n_tokens for m in tr.measures]
        total = tr.answer.n_tokens
        assert counts == [0, *range(3, total, 3), total]
        assert all(m.agent == tr.order[0] for m in tr.measures[1:])


def test_without_corrupted_agents_only_the_honest_reader_reads_against_the_distractor():
    events = _run(3, 0)
    measured = [e for e in events if isinstance(e, TurnMeasured)]
    assert measured and all(set(e.readers) == {"honest"} for e in measured)


def test_meter_events_round_trip_and_reach_the_log_record():
    events = _run(3, 2)
    measured = [e for e in events if isinstance(e, TurnMeasured)]
    assert all(event_from_dict(e.to_dict()) == e for e in measured)
    unit = Unit("demo:hash", QUESTION.qid, QUESTION.gold, None)
    record = trajectory_record(unit, fold(events).methods["RRMaj"].trajectories[0])
    assert record["meter"][0]["turn"] == -1
    assert set(record["meter"][1]) == {"turn", "agent", "corrupted", "n_tokens", "readers"}


def test_the_meter_is_off_by_default_and_hashed():
    config = RunConfig(agents=homogeneous_agents("obey", 3, 1))
    assert config.to_dict()["meter"] is False
    assert config.with_(meter=True).config_hash() != config.config_hash()
    backend = FakeBackend("obey", obeys_injection)
    events = list(run_question(config.with_(k=3, max_tokens=12), QUESTION, TASK, FakePool(backend)))
    assert not any(isinstance(e, TurnMeasured) for e in events) and not backend.scored


def test_reading_and_potential():
    r = reading(math.log(0.6), math.log(0.2))
    assert r["z"] == pytest.approx(math.log(1.5) - math.log(0.25), abs=1e-4)
    assert potential(0.0) == pytest.approx(math.log(2))
    assert potential(50.0) == pytest.approx(math.exp(-50.0))
    assert potential(-50.0) == pytest.approx(50.0)


@pytest.mark.parametrize("method", ["MAJ", "RRMaj"])
def test_the_protocols_know_no_meter_only_the_hook_it_reads_through(method):
    config = RunConfig(
        agents=homogeneous_agents("obey", 3, 1), k=3, max_tokens=12, m=2, meter=True, order="fixed"
    )
    backend = FakeBackend("obey", obeys_injection, reader=votes_reader)
    injection = make_injection("strong", "(C)")
    agents = build_agents(config, FakePool(backend), TASK.prompt(QUESTION), injection)
    protocol = majority_vote if method == "MAJ" else round_robin
    called: list[int] = []

    def hook(turn: int):
        called.append(turn)
        return iter(())

    events = list(protocol(agents, QUESTION, TASK, config, "(C)", after_turn=hook))
    turns = sorted({e.turn for e in events if isinstance(e, ChunkWritten)})
    assert called == [-1, *turns] and turns  # before anything, then after every turn
    assert not any(isinstance(e, TurnMeasured) for e in events) and not backend.scored
