"""What a transformers model's batches take in memory, and the reservations that hold it.

`MemoryAccounting` is the part of `rrdemo.backends.hf.TransformersBackend` that counts a batch's
peak (weights, kept and new KV caches, one prefill pass's activations) in the model's own tokens,
refuses a batch over the run's budget and reserves the rest in the process's `MemoryLedger`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence

import torch
from transformers import DynamicCache

from rrdemo.backends.base import GenerationRequest
from rrdemo.backends.shape import ModelShape
from rrdemo.errors import RRError
from rrdemo.memory_ledger import Reservation


class _Reserved(contextlib.ExitStack):
    """A batch's memory reservation (`MemoryLedger.reserve`), given back when the stack closes."""

    reservation: Reservation | None = None


def cache_bytes(caches: Iterable[DynamicCache]) -> int:
    """Bytes the keys and values of `caches` hold, each storage once (caches share prefixes)."""
    seen, total = set(), 0
    for cache in caches:
        for layer in getattr(cache, "layers", ()):
            for tensor in (getattr(layer, "keys", None), getattr(layer, "values", None)):
                if isinstance(tensor, torch.Tensor) and tensor.numel():
                    storage = tensor.untyped_storage()
                    if storage.data_ptr() not in seen:
                        seen.add(storage.data_ptr())
                        total += storage.nbytes()
    return total


def _return_freed_memory() -> None:
    """Hand the memory freed caches leave in the C allocator's free lists back to the system
    (glibc's `malloc_trim`): otherwise a finished or cancelled run's KV caches stay in the
    process's resident size until later allocations reuse them. A no-op elsewhere."""
    import ctypes
    import ctypes.util

    with contextlib.suppress(OSError, AttributeError, TypeError):  # not glibc: nothing to do
        ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim(0)


class MemoryAccounting:
    """A batch's memory, counted and reserved (mixed into `TransformersBackend`, whose model,
    caches, lock, budget and ledger it reads)."""

    def _reserve_memory(
        self, ids: list[list[int]], requests: Sequence[GenerationRequest]
    ) -> contextlib.AbstractContextManager:
        """Refuse (RRError) a batch whose memory (`memory_need`), counted in this model's own
        tokens, would take the process past its budget (`memory_budget`) by itself; else
        reserve what the batch adds (its caches and activations) in the ledger, which counts
        every other batch and kept model too. The estimate made before the run
        (`rrdemo.memory`) allows a fixed prompt length; this one knows it."""
        if self.memory_budget is None:
            return contextlib.nullcontext()
        from rrdemo.memory import MEMORY_ENV, gb

        budget = self.memory_budget()
        total, weights, kv = self.memory_need(ids, requests)
        if total > budget:
            longest = max(len(row) for row in ids)
            raise RRError(
                f"this run would take about {gb(total)} of memory with {self.name} (weights "
                f"{gb(weights)}, KV caches {gb(kv)}: {len(ids)} new sequences, the longest "
                f"prompt {longest:,} tokens as its tokenizer counts them), over the limit of "
                f"{gb(budget)} ({MEMORY_ENV}); shorten the question, or use fewer agents, a "
                "smaller M or L"
            )
        if self.ledger is None:
            return contextlib.nullcontext()
        held = self._hold_caches()
        longest = max(len(row) for row in ids)
        what = (
            f"KV caches and activations of {len(ids)} sequences of {self.name}, the longest "
            f"prompt {longest:,} tokens"
        )
        return self.ledger.reserve(requests[0].group, total - weights - held, what, budget)

    def _hold_caches(self) -> int:
        """Count the caches this model keeps between turns in the ledger; their bytes."""
        with self._lock:
            held = cache_bytes(c.cache for c in self._caches.values())
        if self.ledger is not None:
            self.ledger.hold(("caches", id(self)), held, f"{self.name}'s kept KV caches")
        return held

    def memory_need(
        self, ids: list[list[int]], requests: Sequence[GenerationRequest]
    ) -> tuple[int, int, int]:
        """(total, weights, KV caches) in bytes at the peak of a batch of prompts `ids`: the
        weights, the caches kept now, each row's prompt plus its new tokens counted twice (a
        batch's caches exist twice for a moment: merged into one padded cache at its start,
        split back out per row at its end) and one prefill pass's activations."""
        weights, per_token, activations = self._sizes()
        with self._lock:
            held = cache_bytes(c.cache for c in self._caches.values())
        tokens = [
            len(row) + max(r.max_new_tokens, r.room or 0)
            for row, r in zip(ids, requests, strict=True)
        ]
        kv = held + 2 * sum(tokens) * per_token
        return weights + kv + activations(max(tokens)), weights, kv

    def _sizes(self) -> tuple[int, int, Callable[[int], int]]:
        """The weights' bytes, a token's KV cache bytes, and the activations of one prefill pass
        reading a context of n tokens (attention scores of every head, the MLP's widest layer)."""
        if self._measured is None:
            config = self.model.config.get_text_config()
            shape = ModelShape.from_config(config.to_dict())
            size = self.model.dtype.itemsize
            weights = sum(p.numel() * p.element_size() for p in self.model.parameters())
            heads, hidden = config.num_attention_heads, config.hidden_size
            wide = max(hidden, getattr(config, "intermediate_size", 0) or 0)
            self._measured = (weights, shape.kv_bytes_per_token(size), heads, wide, size)
        weights, per_token, heads, wide, size = self._measured
        tokens = self.prefill_tokens

        def activations(n: int) -> int:
            return tokens * (heads * n + 4 * wide) * max(size, 4)

        return weights, per_token, activations
