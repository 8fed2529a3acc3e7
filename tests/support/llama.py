"""Helpers for tests of the in-process llama.cpp backend (the real shipped GGUF files)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rrdemo.backends.base import Backend, Finished, GenerationRequest
from rrdemo.backends.llamacpp_native import available
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


def twin(backend, **options):
    """Another llama.cpp backend over the same file (no cached sequences)."""
    from rrdemo.backends.llamacpp import LlamaCppBackend

    return LlamaCppBackend(
        backend.name,
        backend.path,
        chat=backend.chat,
        eos_token_ids=tuple(backend.eos_token_ids),
        n_ctx_seq=512,
        n_seq_max=16,
        **options,
    )


def finish(backend, key, text, n, sampling=GREEDY, seed=0) -> Finished:
    outs = list(backend.generate([GenerationRequest(key, text, n, sampling, seed)]))
    return next(o for o in outs if isinstance(o, Finished))


class OneByOne(Backend):
    """The same backend, but each call's requests generated one after another (no batching)."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.revision = inner, inner.name, None

    def render_prompt(self, user, system=None):
        return self.inner.render_prompt(user, system)

    def generate(self, requests):
        for i, request in enumerate(requests):
            self.inner.release()  # no reuse, no sharing: every prompt from scratch
            for out in self.inner.generate([request]):
                yield replace(out, index=i)
