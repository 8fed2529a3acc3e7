"""The meter's scoring on the real Qwen2.5-Coder-0.5B through llama.cpp: probabilities, the
cached prefix, and the figures in a metered run's events."""

from __future__ import annotations

import math

import pytest

from rrdemo.backends.base import ScoreRequest
from rrdemo.config import AgentSpec, RunConfig
from rrdemo.events import TurnMeasured
from rrdemo.meter import CUE
from rrdemo.protocols import run_question
from rrdemo.tasks import get_task, load_questions
from tests.support.llama import GREEDY, llama, twin

pytestmark = pytest.mark.slow
MODEL = "qwen2.5-coder-0.5b"
QUESTION = "Which is larger, 7 or 9? Options: (A) 7 (B) 9\nThe answer is (X)."


@pytest.fixture(scope="module")
def qwen(llama_pool):
    return llama(llama_pool, MODEL)


def test_letters_after_the_cue_are_probabilities_that_sum_below_one(qwen):
    prompt = qwen.render_prompt(QUESTION)
    [(a, b)] = qwen.score([ScoreRequest(("s", 1), prompt, CUE + " (", ("A", "B"))])
    assert a < 0 and b < 0 and math.exp(a) + math.exp(b) <= 1 + 1e-9
    assert b > a  # the model knows 9 > 7


def test_a_longer_text_read_on_the_cached_prefix_scores_as_from_scratch(qwen):
    prompt = qwen.render_prompt(QUESTION)
    fresh = twin(qwen)
    key = ("s", 2)
    qwen.score([ScoreRequest(key, prompt + "Nine is", CUE, (" 9.", " 7."))])
    cached = qwen._seqs.cached[key].ids
    assert cached == qwen.encode(prompt + "Nine is" + CUE)  # the prompt and cue stay cached
    text = prompt + "Nine is larger than seven."
    [again] = qwen.score([ScoreRequest(key, text, CUE, (" 9.", " 7."))])
    [scratch] = fresh.score([ScoreRequest(key, text, CUE, (" 9.", " 7."))])
    # Repacked weights round a prefill batch and a one-token step differently in the last bits.
    assert again == pytest.approx(scratch, abs=0.1)
    assert math.exp(again[0]) + math.exp(again[1]) <= 1 + 1e-9
    fresh.close()


def test_a_metered_run_carries_p_gold_p_target_and_z_in_its_events(llama_pool):
    llama(llama_pool, MODEL)
    task = get_task("logic3")
    question = load_questions(task, n=1, seed=0)[0]
    agents = tuple(AgentSpec(MODEL, i < 2, backend="llamacpp") for i in range(3))
    config = RunConfig(agents=agents, k=4, max_tokens=8, sampling=GREEDY, meter=True)
    events = list(run_question(config, question, task, llama_pool))
    measured = [e for e in events if isinstance(e, TurnMeasured)]
    assert {e.method for e in measured} == {"MAJ", "RRMaj"}
    for e in measured:
        assert set(e.readers) == {"honest", "corrupted"}
        for r in e.readers.values():
            assert r["p_gold"] > 0 and r["p_target"] > 0 and r["p_gold"] + r["p_target"] <= 1
            z = math.log(r["p_gold"] / (1 - r["p_gold"])) - math.log(
                r["p_target"] / (1 - r["p_target"])
            )
            assert r["z"] == pytest.approx(z, abs=0.01)
    rr = [e for e in measured if e.method == "RRMaj" and e.trajectory == 0]
    assert [e.turn for e in rr] == [-1, 0, 1]
