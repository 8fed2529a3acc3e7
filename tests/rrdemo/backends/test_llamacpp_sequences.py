"""Sequence bookkeeping of the llama.cpp backend: consecutive ids per call, donors still
decoding, dropping cells a copy has superseded, and agents' prompts (heads) kept across runs."""

from __future__ import annotations

import pytest

from bench.variants import BenchLlamaCpp
from rrdemo.backends.base import Delta, Finished, GenerationRequest
from rrdemo.backends.llamacpp import MAX_HEADS
from rrdemo.backends.llamacpp_rows import HEADS
from rrdemo.config import AgentSpec, RunConfig, Sampling
from rrdemo.errors import RRError
from rrdemo.protocols import run_question
from rrdemo.tasks import get_task
from rrdemo.tasks.benchmarks import styled_prompt
from tests.support.llama import (
    GREEDY,
    OneModel,
    cached_keys,
    finish,
    free_sequences,
    llama,
    needs_llama,
    sequences,
    spy_decode,
    twin,
)


def test_new_sequences_come_lowest_first():
    seqs = sequences(4, {0: 1.0})
    assert [seqs.new(set()).sid for _ in range(3)] == [1, 2, 3]
    seqs.give_back(seqs.cached.pop(("key", 0)), kept=False)
    assert seqs.new(set()).sid == 0


def test_a_block_is_consecutive_and_prefers_the_call_s_own_ids():
    seqs = sequences(8, {0: 3.0, 5: 2.0})
    own = seqs.take(6)  # this call's own cached sequence, busy now
    assert seqs.block([own.sid], 3) == [1, 2, 3]  # free: 1, 2, 3, 4, 7
    assert seqs.block([own.sid], 2) == [6, 7]  # holds the call's own id: no move needed
    assert seqs.block([], 4) == [1, 2, 3, 4]


def test_no_block_evicts_a_cache():
    seqs = sequences(4, {1: 1.0, 3: 2.0})
    assert seqs.block([], 2) is None  # free: 0 and 2, not consecutive
    assert set(seqs.cached) == {("key", 1), ("key", 3)}
    seqs.busy.update({0, 2})
    seqs.free.clear()
    with pytest.raises(RRError, match="more than 4 requests"):
        seqs.new({("key", 1), ("key", 3)})


def test_moving_a_sequence_copies_its_kept_cells_and_frees_it():
    seqs = sequences(4)
    old, new = seqs.take(3), seqs.take(0)
    seqs.move(old, new, 5)
    assert seqs._ll.calls[:3] == [("rm", 0, -1), ("cp", 3, 0), ("rm", 0, 5)]
    assert 3 in seqs.free and 3 not in seqs.busy


# -- the real model -------------------------------------------------------------------------------
@needs_llama
def test_decode_steps_over_several_rows_use_consecutive_sequence_ids(llama_pool):
    backend = twin(llama(llama_pool, "smollm2"), BenchLlamaCpp, fixed_length=True)
    calls = spy_decode(backend)
    task = get_task("custom")
    question = task.question("Which is a fruit? (A) car (B) apple (C) stone", gold="(B)")
    agents = (AgentSpec("smollm2", True), AgentSpec("smollm2"), AgentSpec("smollm2"))
    config = RunConfig(agents=agents, k=3, max_tokens=12, m=3, order="shuffled")
    list(run_question(config, question, task, OneModel(backend), methods=("RRMaj",)))
    # Steps with all 3 trajectories (a row that ran on to finish a character leaves a gap).
    steps = [c for c in calls if len(c) == 3 and all(e[3] for e in c)]
    assert len(steps) >= 6  # 4 turns of 3 tokens: the first from the prefill, then 2 steps
    for entries in steps:
        sids = [e[2] for e in entries]
        assert sids == list(range(sids[0], sids[0] + len(sids))), sids
    backend.close()


@needs_llama
def test_a_request_copies_the_prompt_of_a_row_still_decoding_in_another_call(llama_pool):
    backend = twin(llama(llama_pool, "smollm2"))
    prompt = backend.render_prompt("Count from one to ten in words.")
    running = backend.generate([GenerationRequest(("maj",), prompt, 12, GREEDY, 0)])
    first = next(o for o in running if isinstance(o, Delta))  # prefilled, now decoding
    copied = finish(backend, ("rr",), prompt, 4)
    assert copied.prefill_tokens == 1  # the prompt's cells came from the live row
    rest = [o for o in running if isinstance(o, Delta | Finished)]
    text = first.text + "".join(o.text for o in rest if isinstance(o, Delta))
    alone = twin(backend)
    assert text == finish(alone, ("maj",), prompt, 12).text  # the copy did not disturb it
    assert copied.text == finish(alone, ("rr",), prompt, 4).text
    for b in (backend, alone):
        b.close()


@needs_llama
def test_a_donor_the_copy_took_whole_is_dropped_and_its_stream_freed(llama_pool):
    backend = twin(llama(llama_pool, "smollm2"))
    prompt = backend.render_prompt("Describe the sea.")
    text = finish(backend, ("a",), prompt, 4).text
    free = free_sequences(backend)
    b = finish(backend, ("b",), prompt + text, 4)  # same prompt: takes all of a's cells
    assert b.prefill_tokens <= 3
    assert cached_keys(backend) == [("b",)] and free_sequences(backend) == free
    other = backend.render_prompt("Describe the desert.")
    finish(backend, ("c",), other, 2)  # shares only the template's opening: b stays
    assert set(cached_keys(backend)) == {("b",), ("c",)}
    backend.close()


@needs_llama
def test_prefixes_are_shared_within_a_group_only(llama_pool):
    """Concurrent runs (two Arena visitors) never start from each other's cells."""
    backend = twin(llama(llama_pool, "smollm2"))
    prompt = backend.render_prompt("Name three rivers.")
    list(backend.generate([GenerationRequest(("a",), prompt, 2, GREEDY, 0, group="run-1")]))
    running = backend.generate([GenerationRequest(("live",), prompt, 6, GREEDY, 0, group="run-1")])
    next(o for o in running if isinstance(o, Delta))  # a live row of run 1 as well
    other = GenerationRequest(("c",), prompt, 2, GREEDY, 0, group="run-2")
    done = next(o for o in backend.generate([other]) if isinstance(o, Finished))
    assert done.prefill_tokens == len(backend.encode(prompt))
    same = GenerationRequest(("b",), prompt, 2, GREEDY, 0, group="run-1")
    assert next(o for o in backend.generate([same]) if isinstance(o, Finished)).prefill_tokens == 1
    list(running)
    backend.close()


def _run_texts(models, config, question, task) -> tuple[list[str], dict[str, int]]:
    """Every chunk and final text of a run, and the prefill tokens each method spent."""
    texts, prefill = [], {}
    for event in run_question(config, question, task, models):
        if event.kind == "chunk_written":
            texts.append(f"{event.method} {event.trajectory} {event.turn}: {event.text}")
        elif event.kind == "compute_used":
            prefill[event.method] = event.prefill_tokens
    return texts, prefill


@needs_llama
def test_a_repeated_question_starts_from_cached_heads_and_writes_the_same_text(llama_pool):
    """Agents' own prompts (heads) are computed alone and kept across runs: asking again skips
    their prefill, and the text is the one a backend that never saw the question writes."""
    backend = twin(llama(llama_pool, "smollm2"))
    models, task = OneModel(backend), get_task("custom")
    first = task.question("Pick one: (A) red (B) blue", gold="(A)")
    other = task.question("Pick one: (A) up (B) down", gold="(B)")
    bad, good = (AgentSpec("smollm2", c, backend="llamacpp") for c in (True, False))
    hot = Sampling(temperature=0.7, top_p=0.95, seed=3)
    config = RunConfig((bad, bad, good), strength="strong", k=3, max_tokens=9, sampling=hot)
    cold_texts, cold = _run_texts(models, config, first, task)
    heads = [k for k in cached_keys(backend) if k[0] == HEADS]
    assert len(heads) == 2  # the injected prompt and the clean one
    _run_texts(models, config, other, task)
    warm_texts, warm = _run_texts(models, config, first, task)
    assert warm_texts == cold_texts
    prompts = {len(backend.encode(a.prompt)) for a in _agents(backend, config, first, task)}
    assert cold["MAJ"] >= sum(prompts) and warm["MAJ"] <= 3  # one last prompt token per answer
    fresh = twin(backend)
    assert _run_texts(OneModel(fresh), config, first, task)[0] == cold_texts
    for b in (backend, fresh):
        b.close()


@needs_llama
def test_cached_heads_are_bounded_and_a_stopped_run_leaves_only_them(llama_pool):
    backend = twin(llama(llama_pool, "smollm2"))
    models, task = OneModel(backend), get_task("custom")
    agents = tuple(AgentSpec("smollm2", c, backend="llamacpp") for c in (True, False))
    config = RunConfig(agents, strength="strong", k=2, max_tokens=2)
    for i in range(MAX_HEADS):  # two heads a run: twice as many as are kept
        _run_texts(models, config, task.question(f"Is {i} even? (A) yes (B) no"), task)
    keys = cached_keys(backend)
    assert len(keys) == MAX_HEADS and all(k[0] == HEADS for k in keys)
    assert free_sequences(backend) == backend.n_seq_max - MAX_HEADS
    backend.close()


def _agents(backend, config, question, task):
    from rrdemo.agents import build_agents
    from rrdemo.corruption import make_injection
    from rrdemo.protocols import choose_target

    target = choose_target(task, question, config)
    injection = make_injection(config.strength, task.format_target(target), None)
    message = styled_prompt(task.prompt(question), config.prompt_style)
    return build_agents(config, OneModel(backend), message, injection)
