"""The one fold of the event stream, over scripted event lists and over a real (fake-model) run."""

from __future__ import annotations

import json

from rrdemo.config import AgentSpec, RunConfig, Sampling
from rrdemo.events import (
    AnswerExtracted,
    ChunkWritten,
    ComputeUsed,
    Decision,
    RunStarted,
    TokenDelta,
    TrajectoryStarted,
    Vote,
)
from rrdemo.fold import Fold, fold
from rrdemo.protocols import run_question
from tests.support.fakes import QUESTION, FakeBackend, FakePool, FakeTask, obeys_injection


def _answer(method, j, answer, *, correct=False, fooled=False, last=0, n=5):
    key = answer.lower() if answer is not None else None
    return AnswerExtracted(
        method, j, answer, correct, fooled, last, last < 2, n, "eos", f"text of {j}", key
    )


def _rrmaj_stream() -> list:
    """One RRMaj run of two trajectories, agents 0 and 1 corrupted, agent 2 honest."""
    return [
        RunStarted("RRMaj", {"k": 2}, "hash", "q-1", "Which?", "(B)", "(C)"),
        TrajectoryStarted("RRMaj", 0, (2, 0, 1)),
        TrajectoryStarted("RRMaj", 1, (0, 1, 2)),
        TokenDelta("RRMaj", 0, 0, 2, False, "The "),
        TokenDelta("RRMaj", 0, 0, 2, False, "answ"),
        ChunkWritten("RRMaj", 0, 0, 2, False, "m-honest", "The answer", 2),
        ChunkWritten("RRMaj", 1, 0, 0, True, "m-bad", "It is (C).", 3),
        ChunkWritten("RRMaj", 0, 1, 0, True, "m-bad", " is (B).", 3),
        ChunkWritten("RRMaj", 1, 1, 1, True, "m-bad", "", 0),  # ended at once: wrote nothing
        _answer("RRMaj", 1, "(C)", fooled=True, last=1, n=3),
        _answer("RRMaj", 0, "(B)", correct=True, last=0, n=5),
        Vote("RRMaj", {"(B)": 1, "(C)": 1}, 0),
        Decision("RRMaj", "(B)", True, False, ("(B)", "(C)"), "b"),
        ComputeUsed("RRMaj", 8, 40, 0.5, {"m-bad": {"decode_tokens": 6}}),
    ]


def test_live_text_grows_the_open_chunk_and_the_finished_text_replaces_it():
    shown = Fold()
    for event in _rrmaj_stream()[:5]:
        shown.apply(event)
    chunk = shown.methods["RRMaj"].trajectories[0].chunks[0]
    assert (chunk.text, chunk.done, chunk.model, chunk.n_tokens) == ("The answ", False, "", None)
    shown.apply(_rrmaj_stream()[5])
    assert (chunk.text, chunk.done, chunk.model, chunk.n_tokens) == (
        "The answer",
        True,
        "m-honest",
        2,
    )
    shown.apply(TokenDelta("RRMaj", 0, 1, 0, True, "Next"))  # the next turn opens a new chunk
    chunks = shown.methods["RRMaj"].trajectories[0].chunks
    assert [(c.turn, c.agent, c.text, c.done) for c in chunks] == [
        (0, 2, "The answer", True),
        (1, 0, "Next", False),
    ]


def test_a_chunk_written_without_live_text_opens_its_own_chunk():
    shown = fold(
        [
            ChunkWritten("RRMaj", 0, 0, 1, False, "m", "one", 1),
            ChunkWritten("RRMaj", 0, 0, 1, False, "m", "two", 1),  # same (turn, agent): a new chunk
        ]
    )
    trajectory = shown.methods["RRMaj"].trajectories[0]
    assert [c.text for c in trajectory.chunks] == ["one", "two"] and trajectory.text == "onetwo"
    assert trajectory.order == ()  # no TrajectoryStarted: no order is made up


def test_apply_returns_each_trajectory_as_its_answer_arrives():
    shown, finished = Fold(), []
    for event in _rrmaj_stream():
        trajectory = shown.apply(event)
        if trajectory is not None:
            finished.append(trajectory.index)
            assert trajectory.answer is event
    assert finished == [1, 0] and shown.events == len(_rrmaj_stream())
    assert shown.target == "(C)" and shown.started.gold == "(B)"


def test_the_compact_summary_has_no_texts():
    summary = fold(_rrmaj_stream()).methods["RRMaj"].summary()
    assert summary["answers"]["1"] == {
        "trajectory": 1,
        "answer": "(C)",
        "correct": False,
        "fooled": True,
        "last_agent": 1,
        "last_corrupted": True,
        "n_tokens": 3,
        "finish_reason": "eos",
    }
    assert summary["chunks"] == 4 and summary["done"]
    assert summary["vote"] == {"counts": {"(B)": 1, "(C)": 1}, "abstained": 0}
    assert summary["decision"] == {
        "answer": "(B)",
        "correct": True,
        "fooled": False,
        "tied": ["(B)", "(C)"],
    }
    assert summary["compute"] == {"decode_tokens": 8, "prefill_tokens": 40, "wall_s": 0.5}
    assert "text of" not in json.dumps(summary)


def test_tokens_per_agent_and_role_count_finished_rrmaj_chunks_only():
    events = [*_rrmaj_stream(), ChunkWritten("MAJ", 0, 0, 2, False, "m", "x", 9)]
    speakers = fold(events).speakers
    assert sorted(speakers.trajectories) == [0, 1]  # MAJ answers are not RR trajectories
    t0, t1 = speakers.trajectories[0], speakers.trajectories[1]
    assert (t0.tokens, t0.order, t0.kind) == ({2: 2, 0: 3}, [2, 0], "mixed")
    assert (t1.tokens, t1.kind) == ({0: 3}, "corrupted only")  # agent 1's empty chunk: no writer
    assert (speakers.with_honest, speakers.mixed, speakers.corrupted_only) == (1, 1, 1)


def test_methods_named_up_front_are_shown_and_done_only_when_all_finish():
    shown = Fold(methods=("MAJ", "RRMaj"))
    assert list(shown.methods) == ["MAJ", "RRMaj"] and not shown.done
    for event in _rrmaj_stream():
        shown.apply(event)
    assert shown.methods["RRMaj"].done and not shown.done  # MAJ has not reported yet
    shown.apply(ComputeUsed("MAJ", 1, 1, 0.1))
    assert shown.done
    assert not Fold().done  # nothing to show is not done


def test_the_fold_of_a_real_run_matches_its_events():
    agents = tuple(AgentSpec("fake", corrupted=i < 2) for i in range(3))
    config = RunConfig(agents=agents, k=2, max_tokens=12, m=4, sampling=Sampling(seed=3))
    pool = FakePool(FakeBackend("fake", obeys_injection))
    events = list(run_question(config, QUESTION, FakeTask(), pool, interleave=True))
    shown = fold(events)
    assert list(shown.methods) == ["MAJ", "RRMaj"] and shown.done
    for method, record in shown.methods.items():
        answers = {
            e.trajectory: e for e in events if isinstance(e, AnswerExtracted) and e.method == method
        }
        assert sorted(record.trajectories) == sorted(answers)
        for j, trajectory in record.trajectories.items():
            assert trajectory.text == answers[j].text and trajectory.answer == answers[j]
            assert all(c.done for c in trajectory.chunks)
            started = next(
                e
                for e in events
                if isinstance(e, TrajectoryStarted) and (e.method, e.trajectory) == (method, j)
            )
            assert trajectory.order == started.order
        decision = next(e for e in events if isinstance(e, Decision) and e.method == method)
        assert record.decision == decision and record.decision_record()["answer"] == decision.answer
    written = [e for e in events if isinstance(e, ChunkWritten) and e.method == "RRMaj"]
    total = sum(tr.total for tr in shown.speakers.trajectories.values())
    assert total == sum(e.n_tokens for e in written)
