"""llama.cpp's C API as the llama.cpp backend uses it: availability, sampling from logits, the
vocabulary of a real GGUF file, and batches."""

from __future__ import annotations

import os
import sys
from collections import Counter

import numpy as np

from rrdemo.backends.llamacpp_native import Batch, available, idle_threads_sleep, sample_token
from rrdemo.config import Sampling
from tests.support.llama import GREEDY, llama, needs_llama


def test_availability_is_a_reason_when_the_library_does_not_import(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp.llama_cpp", None)  # importing it fails
    reason = available()
    assert reason is not None and reason.startswith(("ImportError", "ModuleNotFoundError"))


def test_sampling_is_greedy_at_zero_and_reproducible_per_seed():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=1000).astype(np.float32)
    assert sample_token(logits, GREEDY, np.random.default_rng(1)) == int(np.argmax(logits))
    hot = Sampling(temperature=1.0, top_p=0.95)

    def draws(seed):
        gen = np.random.default_rng(seed)
        return [sample_token(logits, hot, gen) for _ in range(50)]

    assert draws(3) == draws(3) and draws(3) != draws(4)
    peaked = np.full(1000, -30.0, dtype=np.float32)
    peaked[[7, 9]] = [5.0, 0.0]  # token 7 holds > 99% of the mass: top-p 0.9 keeps it alone
    assert {
        sample_token(peaked, Sampling(1.0, 0.9), np.random.default_rng(s)) for s in range(20)
    } == {7}


def test_without_top_p_tokens_are_drawn_as_often_as_their_softmax_says():
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    logits = np.log(probs).astype(np.float32) * 0.5  # temperature 0.5 undoes the halving
    gen = np.random.default_rng(7)
    n = 4000
    counts = Counter(sample_token(logits, Sampling(0.5, 1.0), gen) for _ in range(n))
    for token, p in enumerate(probs):
        assert abs(counts[token] / n - p) < 4 * np.sqrt(p * (1 - p) / n)


def test_top_p_draws_from_the_nucleus_only():
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05])).astype(np.float32)
    gen = np.random.default_rng(3)
    drawn = {sample_token(logits, Sampling(1.0, 0.7), gen) for _ in range(300)}
    assert drawn == {0, 1}  # 0.5 + 0.3 reach 0.7: the two others are outside the nucleus


@needs_llama
def test_the_vocabulary_turns_text_into_ids_and_ids_back_into_its_bytes(llama_pool):
    vocab = llama(llama_pool, "smollm2")._vocab
    text = "Hello, wörld: 3 × 4 ≈ 12!"
    ids = vocab.tokenize(text, add_special=False)
    assert 0 < len(ids) <= len(text.encode()) and all(0 <= t < vocab.n_tokens for t in ids)
    assert b"".join(vocab.piece(t) for t in ids) == text.encode()
    eos = vocab.tokenize(vocab.eos_text(), add_special=False)
    assert len(eos) == 1 and eos[0] in vocab.end_of_generation()  # a special token, parsed whole
    assert vocab.meta("general.architecture") == "llama"
    assert vocab.meta("no.such.key") is None


@needs_llama
def test_a_batch_holds_each_entry_s_token_position_sequence_and_output_flag():
    import llama_cpp

    batch = Batch(llama_cpp, 8, 4)
    try:
        entries = [(11, 0, 2, False), (12, 1, 2, False), (13, 0, 3, True)]
        batch.fill(entries)
        assert batch.raw.n_tokens == 3
        got = [
            (int(batch.token[i]), int(batch.pos[i]), batch.raw.seq_id[i][0], bool(batch.logits[i]))
            for i in range(3)
        ]
        assert got == entries and list(batch.n_seq[:3]) == [1, 1, 1]
    finally:
        batch.free()


def test_openmp_threads_sleep_when_idle_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    idle_threads_sleep()
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    idle_threads_sleep()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
