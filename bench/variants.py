"""The engines as the benchmarks run them: a fixed decoding length, and one optimisation off.

Each class overrides the one small engine method its switch lives in, so the engines themselves
(`rrdemo.backends.hf`, `rrdemo.backends.llamacpp`) carry no benchmark options:

- `fixed_length=True` (any class here, also settable between runs): end-of-sequence is never
  drawn, so every request decodes exactly its `max_new_tokens` (what `generate(min_new_tokens=...)`
  does). MAJ answers and RR trajectories then decode the same budget, N x L tokens per question.
- `NoPrefixSharing`: a request starts from its own cache only, never from another key's
  (transformers: `_donor`, `_waits_for`; llama.cpp: `LlamaCppNoPrefixSharing._assign`).
- `NoKvReuse`: nothing is kept between requests, so every turn prefills its whole prompt.
- `NoBatching`: the requests of one call run one at a time.

`twin` builds any of them over a loaded engine's model. The tests use the variants as the plain
path the optimised engine must agree with.
"""

from __future__ import annotations

from collections.abc import Hashable

from rrdemo.backends.hf import TransformersBackend
from rrdemo.backends.hf_memory import _Reserved
from rrdemo.backends.llamacpp import LlamaCppBackend
from rrdemo.backends.llamacpp_rows import assign


class FixedLength:
    """Mixin for an engine: with `fixed_length` set, end-of-sequence tokens are never drawn."""

    def __init__(self, *args, fixed_length: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fixed_length = fixed_length

    def _allowed(self, logits):
        logits = super()._allowed(logits)
        if self.fixed_length and self.eos_token_ids:
            logits[..., sorted(self.eos_token_ids)] = float("-inf")
        return logits


class BenchTransformers(FixedLength, TransformersBackend):
    """The transformers engine, optionally at a fixed length."""


class NoPrefixSharing(BenchTransformers):
    """A request starts from its own cache only: no other key's cache, no waiting for a row of
    the same pass that would hold its prompt."""

    def _donor(self, ids, keep, batch_rows, group):
        return None

    @staticmethod
    def _waits_for(peers, ids, keep) -> bool:
        return False


class NoKvReuse(NoPrefixSharing):
    """Nothing is kept between requests: every request prefills its whole prompt."""

    def _take(self, key: Hashable):
        return None

    def _keep(self, key: Hashable, cached) -> None:
        return None


class NoBatching(BenchTransformers):
    """The requests of one call run one at a time."""

    def generate(self, requests):
        for item in enumerate(requests):
            with _Reserved() as reserved:  # its memory reservation, given back after it
                yield from self._generate_batch([item], reserved)


class BenchLlamaCpp(FixedLength, LlamaCppBackend):
    """The llama.cpp engine, optionally at a fixed length."""


class LlamaCppNoPrefixSharing(BenchLlamaCpp):
    """A request starts from its own cached cells only, never from a copy of another key's
    (nor of a cached head: none is computed)."""

    def _heads(self, plans, protect) -> dict[int, int]:
        return {}

    def _assign(self, plans, protect, rows) -> None:
        assign(self._seqs, self._live.values(), plans, protect, rows, share_prefixes=False)


def twin(backend, cls: type | None = None, **options):
    """An engine of class `cls` (default: the bench class of `backend`'s engine) over `backend`'s
    model: the same weights in memory for transformers, the same GGUF file for llama.cpp.
    `options` go to the constructor (`fixed_length`; llama.cpp's context sizes)."""
    if isinstance(backend, LlamaCppBackend):
        made = (cls or BenchLlamaCpp)(
            backend.name,
            backend.path,
            chat=backend.chat,
            eos_token_ids=tuple(backend.eos_token_ids),
            **options,
        )
    else:
        made = (cls or BenchTransformers)(
            backend.name,
            backend.model,
            backend.tokenizer,
            revision=backend.revision,
            chat=backend.chat,
            eos_token_ids=tuple(backend.eos_token_ids),
            **options,
        )
    made.loaded_from = getattr(backend, "loaded_from", None)
    return made
