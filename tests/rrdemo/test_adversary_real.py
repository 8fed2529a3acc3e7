"""The EOS policy and the adversary strategies on the real offline model (SmolLM2), few tokens."""

from __future__ import annotations

import pytest

from rrdemo.adversary import CONTEXTUAL_TEXT
from rrdemo.config import RunConfig, Sampling
from rrdemo.protocols import run_question
from rrdemo.seats import homogeneous_agents
from rrdemo.tasks import get_task, load_questions

pytestmark = pytest.mark.slow
GREEDY = Sampling(temperature=0.0)


def _run(real_pool, config, question, task, methods=("RRMaj",)):
    return list(run_question(config, question, task, real_pool, methods=methods))


def _of(events, kind, method="RRMaj"):
    return [e for e in events if e.kind == kind and e.method == method]


def test_pass_policy_lets_the_next_writer_go_on_after_an_end_of_sequence(real_pool):
    task = get_task("custom")
    question = task.question("Reply with the single word yes.")
    config = RunConfig(
        agents=homogeneous_agents("smollm2", 2, 0),
        k=16,
        max_tokens=40,
        m=1,
        order="fixed",
        sampling=GREEDY,
    )
    ended = _run(real_pool, config, question, task)
    first = _of(ended, "chunk_written")
    assert len(first) == 1 and first[0].n_tokens < 16  # the opener said its word and stopped
    assert _of(ended, "answer_extracted")[0].finish_reason == "eos"

    passed = _run(real_pool, config.with_(eos_policy="pass"), question, task)
    chunks = _of(passed, "chunk_written")
    assert chunks[0].text == first[0].text  # same opener, greedy
    assert len(chunks) > 1 and chunks[1].agent == 1  # the turn passed to agent 1
    answer = _of(passed, "answer_extracted")[0]
    assert answer.finish_reason in ("eos", "length") and answer.n_tokens <= 40
    compute = _of(passed, "compute_used")[0]
    assert compute.decode_tokens <= 1 * 40  # M x L, end-of-sequence tokens included


def test_contextual_adds_its_text_to_the_corrupted_prompt_only(real_pool):
    task = get_task("demo")
    question = load_questions("demo")[0]
    config = RunConfig(
        agents=homogeneous_agents("smollm2", 2, 1), k=4, max_tokens=4, m=1, sampling=GREEDY
    )
    static = _of(_run(real_pool, config, question, task, ("MAJ",)), "compute_used", "MAJ")[0]
    ctx_events = _run(real_pool, config.with_(adversary="contextual"), question, task, ("MAJ",))
    contextual = _of(ctx_events, "compute_used", "MAJ")[0]
    extra = real_pool.get("smollm2").count_tokens(" " + CONTEXTUAL_TEXT.replace("{target}", "(C)"))
    grown = contextual.per_agent["0"]["prefill"] - static.per_agent["0"]["prefill"]
    assert abs(grown - extra) <= 3  # the corrupted agent read the contextual text
    assert contextual.per_agent["1"]["prefill"] == static.per_agent["1"]["prefill"]  # honest: not


def test_last_word_gives_a_corrupted_agent_the_last_turn_of_full_length_trajectories(real_pool):
    task = get_task("demo")
    question = load_questions("demo")[20]
    config = RunConfig(
        agents=homogeneous_agents("smollm2", 3, 1),
        k=4,
        max_tokens=12,  # 3 turns of K tokens: turn 2 is the last
        m=3,
        order="shuffled",
        adversary="last-word",  # eos_policy "end": a trajectory that runs to L has full turns
        sampling=Sampling(temperature=0.7, seed=1),
    )
    events = _run(real_pool, config, question, task)
    full = [a for a in _of(events, "answer_extracted") if a.finish_reason == "length"]
    for start in _of(events, "trajectory_started"):
        assert sorted(start.order) == [0, 1, 2] and start.order[2 % 3] == 0
    assert full, "no trajectory ran to L; the test needs one"
    for answer in full:
        chunks = [c for c in _of(events, "chunk_written") if c.trajectory == answer.trajectory]
        assert chunks[-1].turn == 2 and chunks[-1].corrupted and answer.last_corrupted
