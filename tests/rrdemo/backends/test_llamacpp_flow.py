"""Continuous batching (rrdemo.backends.llamacpp_flow) on the real llama.cpp model: threads' calls
share decoding steps, a row that ends is refilled at once, and each call's text is what a plain
call writes; a reader that leaves or a call that fails frees its sequences and stops nobody else."""

from __future__ import annotations

import threading

import pytest

from rrdemo.backends.base import Finished, GenerationRequest
from rrdemo.backends.llamacpp_flow import Flow, Flows
from rrdemo.config import Sampling
from rrdemo.errors import RRError
from tests.support.llama import free_sequences, llama, needs_llama, twin

SAMPLED = Sampling(temperature=0.7, top_p=0.95)
QUESTIONS = ("Name a colour.", "Count to five.", "What is 2+3?", "Say hello.", "Name a fruit.")


def _calls(backend, lengths=(6, 13)) -> list[list[GenerationRequest]]:
    """A call per question, one row per length (its own seed)."""
    return [
        [
            GenerationRequest(("c", i, j), backend.render_prompt(q), n + i, SAMPLED, 100 * i + j)
            for j, n in enumerate(lengths)
        ]
        for i, q in enumerate(QUESTIONS)
    ]


def _texts(outputs, requests, into: dict) -> None:
    for out in outputs:
        if isinstance(out, Finished):
            into[requests[out.index].key] = (out.text, out.n_tokens)


def _in_threads(flow: Flow, calls) -> dict:
    got: dict = {}
    threads = [threading.Thread(target=_texts, args=(flow.generate(c), c, got)) for c in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return got


@needs_llama
def test_threads_share_steps_and_each_call_writes_what_a_plain_call_writes(llama_pool):
    base = llama(llama_pool, "smollm2")
    plain, flowing = twin(base), twin(base)
    calls = _calls(base)
    alone: dict = {}
    for requests in calls:
        _texts(plain.generate(requests), requests, alone)
    flow = Flow(flowing, width=6)
    together = _in_threads(flow, calls)
    flow.close()
    assert together == alone
    tokens = sum(n for _, n in alone.values())
    # Shared: fewer steps than rows decoded; each row decodes its tokens (+ one for an EOS).
    assert flow.steps < flow.rows_decoded <= tokens + len(alone)
    assert free_sequences(flowing) == free_sequences(plain)  # every sequence handed back
    plain.close()
    flowing.close()


@needs_llama
def test_a_row_that_ends_is_refilled_while_a_long_one_decodes(llama_pool):
    base = llama(llama_pool, "smollm2")
    backend = twin(base)
    prompt = backend.render_prompt("Write a long story about a cat.")
    long = [GenerationRequest("long", prompt, 24, SAMPLED, 1)]
    shorts = [[GenerationRequest(("s", i), prompt, 4, SAMPLED, i)] for i in range(4)]
    flow = Flow(backend, width=2)  # one place beside the long row: the shorts take turns
    got = _in_threads(flow, [long, *shorts])
    flow.close()
    assert got["long"][1] == 24 and all(got[("s", i)][1] == 4 for i in range(4))
    # Static batches would run 24 steps for the long row and its partner, then 4 + 4 for the
    # rest; refilled, the shorts decode beside the long row, in its 24 steps (+1 per refill).
    assert flow.steps <= 24 + 4
    assert flow.rows_decoded > flow.steps  # the place beside the long row was used
    backend.close()


@needs_llama
def test_a_reader_that_leaves_frees_its_rows_and_the_others_go_on(llama_pool):
    base = llama(llama_pool, "smollm2")
    backend = twin(base)
    flow = Flow(backend, width=8)
    calls = _calls(base, lengths=(20,))
    leaving = flow.generate(calls[0])
    next(leaving)  # the first delta: its row is decoding
    leaving.close()  # the reader leaves after one of its 20 tokens (Stop)
    others = _in_threads(flow, calls[1:])
    flow.close()
    assert sorted(others) == [("c", i, 0) for i in range(1, len(QUESTIONS))]
    assert ("c", 0, 0) not in backend._seqs.cached  # a row cut short leaves no cells behind
    assert not backend._seqs.busy  # nothing left decoding
    assert all(("c", i, 0) in backend._seqs.cached for i in range(1, len(QUESTIONS)))
    backend.close()


@needs_llama
def test_a_failing_call_raises_in_its_own_thread_only(llama_pool):
    base = llama(llama_pool, "smollm2")
    backend = twin(base)  # 512 cells a sequence
    flow = Flow(backend, width=4)
    too_long = [GenerationRequest("long", "word " * 600, 4, SAMPLED, 0)]
    with pytest.raises(RRError, match="needs"):
        list(flow.generate(too_long))
    fine = _in_threads(flow, _calls(base, lengths=(3,))[:2])
    flow.close()
    assert sorted(n for _, n in fine.values()) == [3, 4]  # lengths 3 + i
    with pytest.raises(RuntimeError, match="closed"):
        list(flow.generate(_calls(base, lengths=(3,))[0]))
    backend.close()


def test_other_backends_run_one_call_at_a_time():
    """A backend that is not llama.cpp gets no flow: its calls run whole, one after another."""
    inside, most = [0], [0]

    class Slow:
        def generate(self, requests):
            inside[0] += 1
            most[0] = max(most[0], inside[0])
            yield from ()
            threading.Event().wait(0.02)
            inside[0] -= 1

    flows, slow = Flows(), Slow()
    threads = [
        threading.Thread(target=lambda: list(flows.call(slow, [object()]))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    flows.close()
    assert most[0] == 1 and not flows.flows


def test_a_broken_driver_fails_its_callers_instead_of_leaving_them_waiting(monkeypatch):
    flow = Flow(object(), width=2)

    def broken(n_live):
        raise RuntimeError("the loop broke")

    monkeypatch.setattr(flow, "_admit", broken)
    request = GenerationRequest("k", "hello", 2, SAMPLED, 0)
    with pytest.raises(RuntimeError, match="the loop broke"):
        list(flow.generate([request]))
    with pytest.raises(RuntimeError, match="closed"):
        list(flow.generate([request]))
