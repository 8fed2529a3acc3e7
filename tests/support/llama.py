"""Helpers for tests of the in-process llama.cpp backend (the real shipped GGUF files)."""

from __future__ import annotations

import pytest

from rrdemo.backends.base import Finished, GenerationRequest
from rrdemo.backends.llamacpp_native import available
from rrdemo.backends.llamacpp_sequences import Sequences
from rrdemo.config import Sampling

GREEDY = Sampling(temperature=0.0)
needs_llama = pytest.mark.skipif(
    available() is not None, reason=f"llama-cpp-python is not importable ({available()})"
)


def llama(pool, name):
    """`name`'s llama.cpp backend from `pool` (the test is skipped without llama-cpp-python)."""
    if available() is not None:
        pytest.skip(f"llama-cpp-python is not importable ({available()})")
    return pool.get(name, None, "llamacpp")


def twin(backend, cls=None, **options):
    """Another llama.cpp backend over the same file (no cached sequences, a small context): the
    engine itself, or `cls`, one of its benchmark variants (bench/variants.py)."""
    from bench.variants import twin as variant
    from rrdemo.backends.llamacpp import LlamaCppBackend

    return variant(backend, cls or LlamaCppBackend, n_ctx_seq=512, n_seq_max=16, **options)


def finish(backend, key, text, n, sampling=GREEDY, seed=0) -> Finished:
    outs = list(backend.generate([GenerationRequest(key, text, n, sampling, seed)]))
    return next(o for o in outs if isinstance(o, Finished))


def spy_decode(backend) -> list[list[tuple]]:
    """Record the entries of every llama_decode call `backend` makes from now on."""
    calls: list[list[tuple]] = []
    decode = backend._decode

    def spy(entries):
        calls.append(list(entries))
        decode(entries)

    backend._decode = spy
    return calls


class OneModel:
    """A model source handing `backend` to every agent."""

    def __init__(self, backend) -> None:
        self.backend = backend

    def get(self, *_, **__):
        return self.backend


def cached_keys(backend) -> list:
    """The request keys whose sequences `backend` keeps cached (its sequence table's view)."""
    return list(backend._seqs.cached)


def free_sequences(backend) -> int:
    """How many of `backend`'s sequence ids are free."""
    return len(backend._seqs.free)


class RecordedMemory:
    """llama.cpp's memory calls, recorded (for `Sequences` without a model)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def llama_memory_seq_rm(self, _mem, sid, p0, _p1):
        self.calls.append(("rm", sid, p0))

    def llama_memory_seq_cp(self, _mem, source, target, _p0, _p1):
        self.calls.append(("cp", source, target))


def sequences(n: int = 8, cached: dict[int, float] | None = None) -> Sequences:
    """`n` sequences; `cached` maps sequence ids to their last use (idle keys named by id)."""
    seqs = Sequences(RecordedMemory(), None, n, "model")
    for sid, used in (cached or {}).items():
        seq = seqs.take(sid)
        seq.used = used
        seqs.keep(("key", sid), seq)
    return seqs
