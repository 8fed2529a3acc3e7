"""rrdemo.chunks: one turn of writing, batched per model, as events and Finished results."""

from __future__ import annotations

import pytest

from rrdemo.agents import Agent
from rrdemo.chunks import ChunkRequest, ComputeCounter, write_chunks
from rrdemo.config import AgentSpec, RunConfig, Sampling
from rrdemo.errors import RRError
from rrdemo.events import ChunkWritten, TokenDelta
from rrdemo.seats import homogeneous_agents
from rrdemo.voting import derive_seed
from tests.support.fakes import FakeBackend

CONFIG = RunConfig(
    agents=homogeneous_agents("a", 3, 1), k=4, max_tokens=64, sampling=Sampling(seed=7)
)


def agent(index: int, backend: FakeBackend, corrupted: bool = False) -> Agent:
    return Agent(index, AgentSpec(backend.name, corrupted), backend, f"<agent {index}>")


def request(trajectory: int, who: Agent, k: int = 4) -> ChunkRequest:
    return ChunkRequest(trajectory, who, who.prompt, k, ("run", "RRMaj", "q1", trajectory))


def run(chunks, counter=None):
    """The events write_chunks yields and the results it returns."""
    counter = counter or ComputeCounter()
    stream = write_chunks("RRMaj", 2, chunks, CONFIG, counter)
    events = []
    while True:
        try:
            events.append(next(stream))
        except StopIteration as stop:
            return events, stop.value


def test_requests_that_share_a_model_go_to_it_as_one_batch():
    a = FakeBackend("a", lambda prompt: "one two three")
    b = FakeBackend("b", lambda prompt: "four five")
    chunks = [request(0, agent(0, a)), request(1, agent(1, b)), request(2, agent(2, a))]
    run(chunks)
    assert [[r.key[3] for r in call] for call in a.calls] == [[0, 2]]
    assert [[r.key[3] for r in call] for call in b.calls] == [[1]]


def test_each_request_writes_one_chunk_and_its_result_comes_back_in_input_order():
    a = FakeBackend("a", lambda prompt: "one two three four five six")
    b = FakeBackend("b", lambda prompt: "x y")
    chunks = [request(0, agent(0, a, corrupted=True)), request(1, agent(1, b))]
    events, results = run(chunks)
    written = [e for e in events if isinstance(e, ChunkWritten)]
    assert [(w.trajectory, w.turn, w.agent, w.corrupted, w.text, w.n_tokens) for w in written] == [
        (0, 2, 0, True, "one two three four ", 4),  # K = 4 words of six
        (1, 2, 1, False, "x y", 2),  # ended by its end-of-sequence
    ]
    deltas = [e.text for e in events if isinstance(e, TokenDelta) and e.trajectory == 0]
    assert "".join(deltas) == "one two three four "
    assert [(r.text, r.finish_reason) for r in results] == [
        ("one two three four ", "length"),
        ("x y", "eos"),
    ]


def test_every_request_is_seeded_from_the_run_seed_its_key_without_the_run_id_and_the_turn():
    a = FakeBackend("a", lambda prompt: "w")
    run([request(3, agent(0, a))])
    (sent,) = a.calls[0]
    assert sent.seed == derive_seed(7, "RRMaj", "q1", 3, 2)
    assert sent.group == "run" and sent.sampling == CONFIG.sampling


def test_the_counter_adds_up_decode_and_prefill_tokens_per_agent():
    a = FakeBackend("a", lambda prompt: "one two")
    counter = ComputeCounter()
    run([request(0, agent(0, a)), request(1, agent(1, a))], counter)
    run([request(0, agent(0, a))], counter)
    used = counter.event("RRMaj")
    # each call: 2 words + the end-of-sequence decoded, 2 prompt "words" prefilled
    assert used.per_agent == {
        "0": {"decode": 6, "prefill": 4},
        "1": {"decode": 3, "prefill": 2},
    }
    assert (used.decode_tokens, used.prefill_tokens) == (9, 6)


def test_a_backend_failure_names_the_method_and_the_turn():
    class Failing(FakeBackend):
        def generate(self, requests):
            raise RRError("the server went away")
            yield

    with pytest.raises(RRError, match="^RRMaj turn 2: the server went away$"):
        run([request(0, agent(0, Failing("a", lambda prompt: "")))])
