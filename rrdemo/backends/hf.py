"""Local Hugging Face models through transformers, with per-agent KV caches and batched decoding.

Every agent keeps its own KV cache over what it has read (keyed by `GenerationRequest.key`). On
its next turn the full text it sees is tokenized again, the longest common token prefix with the
cached ids is kept, the cache is cropped to it, and only the new suffix is prefilled. The same
model computes the same keys and values for the same token ids, so a request may also start from
another key's cache of its run (`GenerationRequest.group`) sharing a longer prefix (agents with
the same prompt, the same agent in several trajectories): the tensors are shared, never copied, because cache updates
build new tensors instead of writing into old ones. Requests given together run as one batch:
their starting caches are left-padded into one batched cache, all their new suffixes are
prefilled together, in slices of at most `PREFILL_TOKENS` tokens that a caller may stop between
(a row whose prompt another row of the batch is about to read waits for a second pass and starts
from it), the rows are decoded step by step, and each row's cache is split back out when it
finishes. Before a batch is prefilled its memory, counted in the model's own tokens, is checked
against the run's budget (`memory_need`). Each row's text and stop come from its
`rrdemo.backends.row_decoder.RowDecoder` (the K-th-token rule), fed every token with the bytes
it adds (`hf_pieces.TokenBytes`); the cache keeps everything fed.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Generator, Hashable, Iterator, Sequence
from dataclasses import dataclass, field

import torch
from transformers import DynamicCache

from rrdemo.backends.base import (
    Backend,
    Delta,
    Finished,
    GenerationOutput,
    GenerationRequest,
    ScoreRequest,
    continuation_ids,
    keys_with_prefix,
    render_prompt_text,
)
from rrdemo.backends.hf_memory import MemoryAccounting, _Reserved, _return_freed_memory
from rrdemo.backends.hf_pieces import TokenBytes
from rrdemo.backends.hf_tensors import merge, sample_tokens, split, view
from rrdemo.backends.row_decoder import RowDecoder
from rrdemo.backends.tokens import by_length, common_prefix
from rrdemo.memory_ledger import MemoryLedger


@dataclass
class _Cached:
    cache: DynamicCache
    ids: list[int]  # the token ids whose keys and values are in `cache`
    group: Hashable | None = None  # prefix-sharing group of the request that filled it


@dataclass
class _Row:
    """One request while it is being decoded."""

    index: int
    request: GenerationRequest
    cache: DynamicCache
    # tokens in the cache (prompt prefix); generated tokens are appended as they are fed
    ids: list[int]
    rng: torch.Generator
    prefill_tokens: int
    decoder: RowDecoder = field(init=False)  # the tokens written, the text, the stop

    def __post_init__(self) -> None:
        self.decoder = RowDecoder(self.request)


# A prefill's empty deltas, then its rows, their batched cache and mask, and each row's logits.
Prefill = Generator[Delta, None, tuple[list[_Row], DynamicCache, torch.Tensor, torch.Tensor]]


# A row waits for a batch row sharing this many more prompt tokens than any cache (first turns).
_MIN_SHARED = 8
PREFILL_TOKENS = 512  # tokens of one prefill pass, over all its rows, on a CPU
PREFILL_TOKENS_GPU = 8192


class TransformersBackend(MemoryAccounting, Backend):
    """A causal LM from transformers.

    Its optimisations (cache reuse `_take`/`_keep`, prefix sharing `_donor`/`_waits_for`, batching
    `generate`) and the logits a token is drawn from (`_allowed`) are small methods, so the
    benchmarks' variants (bench/variants.py) can turn one off or force a fixed length.
    """

    def __init__(
        self,
        name: str,
        model,
        tokenizer,
        *,
        revision: str | None = None,
        chat: bool | None = None,
        eos_token_ids: Sequence[int] = (),
    ) -> None:
        self.name = name
        self.revision = revision
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.chat = bool(tokenizer.chat_template) if chat is None else chat
        self.eos_token_ids = frozenset(self._eos_ids(eos_token_ids))
        self.piece = TokenBytes(tokenizer)  # the bytes a token adds to the text
        self._caches: dict[Hashable, _Cached] = {}
        # batches being decoded, with the groups (run ids) of their requests
        self._batches: weakref.WeakKeyDictionary[Iterator, frozenset] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        # tokens of one prefill pass over all its rows: a pass ends within about a second on a
        # CPU (500 tokens/s for SmolLM2-135M here), and a long prompt's activations stay small
        self.prefill_tokens = (
            PREFILL_TOKENS_GPU if self.model.device.type != "cpu" else PREFILL_TOKENS
        )
        # bytes a run may take (`rrdemo.memory.memory_budget`), set by the pool; None: unchecked
        self.memory_budget: Callable[[], int] | None = None
        # the process's account of memory (`rrdemo.memory_ledger`), set by the pool; None: none
        self.ledger: MemoryLedger | None = None
        self._measured: tuple | None = None  # what `_sizes` reads off the model, once

    # -- prompts and tokens ----------------------------------------------------------------------
    def _eos_ids(self, extra: Sequence[int]) -> set[int]:
        ids = set(extra)
        for source in (
            self.tokenizer.eos_token_id,
            getattr(self.model.generation_config, "eos_token_id", None),
        ):
            if isinstance(source, int):
                ids.add(source)
            elif source:
                ids.update(source)
        if self.chat:  # chat templates close a turn with their own end token (e.g. <|im_end|>)
            for token in ("<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>"):
                tid = self.tokenizer.convert_tokens_to_ids(token)
                if isinstance(tid, int) and tid != self.tokenizer.unk_token_id and tid >= 0:
                    ids.add(tid)
        return ids

    def render_prompt(self, user: str, system: str | None = None) -> str:
        tokenizer = self.tokenizer if self.chat else None
        return render_prompt_text(tokenizer, user, system, bounded=self.loaded_from == "hub")

    def encode(self, text: str) -> list[int]:
        """Token ids of what the model reads. Chat templates carry their own special tokens;
        base models get the tokenizer's usual prefix (e.g. <bos>)."""
        return self.tokenizer(text, add_special_tokens=not self.chat)["input_ids"]

    @property
    def max_context(self) -> int | None:
        return getattr(self.model.config, "max_position_embeddings", None)

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def release(self, key_prefix: tuple = ()) -> None:
        """Drop the caches kept under `key_prefix`, and close the batches of that run (its
        first element is the run id, the requests' group) still being decoded: a run closed
        in the middle may leave its generators suspended, not closed, holding their batched
        cache until they are collected, after the memory was handed back."""
        with self._lock:
            for key in keys_with_prefix(list(self._caches), key_prefix):
                del self._caches[key]
            batches = [
                b
                for b, groups in self._batches.items()
                if not key_prefix or key_prefix[0] in groups
            ]
        for batch in batches:
            with contextlib.suppress(ValueError):  # running in another thread: it ends itself
                batch.close()
        self._hold_caches()
        _return_freed_memory()

    def _take(self, key: Hashable) -> _Cached | None:
        """The cache kept under `key`, now owned by the caller (None if there is none)."""
        with self._lock:
            return self._caches.pop(key, None)

    def _keep(self, key: Hashable, cached: _Cached) -> None:
        """Keep `cached` under `key` for the key's next request."""
        with self._lock:
            self._caches[key] = cached

    def prefixes(self, text: str, every: int) -> list[tuple[int, str]]:
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        cuts = [*range(every, len(ids), every), len(ids)] if ids else []
        return [(n, self.tokenizer.decode(ids[:n], skip_special_tokens=True)) for n in cuts]

    # -- the meter -------------------------------------------------------------------------------
    @torch.inference_mode()
    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[float, ...]]:
        """One request at a time: the prompt from the longest cached prefix (its own or another
        key's of its group), kept under its key; cue + candidate on a view of it, never kept."""
        device = self.model.device
        tokenize = lambda text: self.tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
        results = []
        for request in requests:
            ids = self.encode(request.prompt)
            if not ids:
                raise ValueError("empty prompt")
            owned = self._take(request.key)
            source, keep = self._plan(ids, owned, (), request.group)
            cache = DynamicCache() if source is None else view(source, keep)
            suffix = torch.tensor([ids[keep:]], device=device)
            self.model(input_ids=suffix, past_key_values=cache, use_cache=True, logits_to_keep=1)
            self._keep(request.key, _Cached(cache, list(ids), request.group))
            cue = tokenize(request.cue)
            scores = []
            for candidate in request.candidates:
                tail = continuation_ids(tokenize, request.cue, cue, candidate)
                fed = torch.tensor([cue + tail], device=device)
                out = self.model(
                    input_ids=fed, past_key_values=view(cache, len(ids)), use_cache=True
                )
                logp = torch.log_softmax(out.logits[0, len(cue) - 1 : -1].float(), dim=-1)
                scores.append(float(logp[torch.arange(len(tail)), torch.tensor(tail)].sum()))
            results.append(tuple(scores))
        return results

    # -- generation ------------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        reserved = _Reserved()  # the batch's memory reservation, taken at prefill
        batch = self._generate_batch(list(enumerate(requests)), reserved)
        with self._lock:  # `release` of its run closes it, whoever still holds it
            self._batches[batch] = frozenset(request.group for request in requests)
        try:
            with reserved:
                for output in batch:
                    yield output
                    if reserved.reservation is not None:
                        reserved.reservation.check()  # the memory watchdog may stop this run
        finally:
            with self._lock:
                self._batches.pop(batch, None)
            self._hold_caches()

    @torch.inference_mode()
    def _generate_batch(
        self, requests: list[tuple[int, GenerationRequest]], reserved: _Reserved
    ) -> Iterator[GenerationOutput]:
        # 1. Prefill: every request runs only the tokens no cache has seen, all rows in a few
        #    forward passes of at most `prefill_tokens` tokens (an empty delta after each long
        #    one, so the run can be stopped), leaving one left-padded batched cache.
        rows, cache, mask, logits = yield from self._prefill_batch(requests, reserved)
        positions = torch.tensor([[len(r.ids)] for r in rows], device=self.model.device)
        logits = self._allowed(logits)
        next_tokens = sample_tokens(
            logits, [r.request.sampling for r in rows], [r.rng for r in rows]
        )
        # 2. Decode: append each row's token, retire finished rows, then one forward step for the rest.
        while rows:
            keep = []
            for b, (row, token) in enumerate(zip(rows, next_tokens, strict=True)):
                decoder = row.decoder
                eos = token in self.eos_token_ids
                delta = decoder.step(token, self.piece(token), eos, decoder.entropy_of(logits[b]))
                if delta:
                    yield Delta(row.index, delta)
                if decoder.stop is not None:
                    yield self._finish(row, split(cache, mask, b))
                else:
                    keep.append(b)
            if not keep:
                return
            if len(keep) < len(rows):
                rows = [rows[b] for b in keep]
                index = torch.tensor(keep, device=self.model.device)
                cache.batch_select_indices(index)
                mask, positions = mask[index], positions[index]
            fed = torch.tensor([[r.decoder.tokens[-1]] for r in rows], device=self.model.device)
            mask = torch.cat([mask, mask.new_ones((len(rows), 1))], dim=1)
            out = self.model(
                input_ids=fed,
                attention_mask=mask,
                position_ids=positions,
                past_key_values=cache,
                use_cache=True,
            )
            positions = positions + 1
            logits = self._allowed(out.logits[:, -1, :])
            next_tokens = sample_tokens(
                logits, [r.request.sampling for r in rows], [r.rng for r in rows]
            )

    def _allowed(self, logits: torch.Tensor) -> torch.Tensor:
        """The logits the next tokens are drawn from: all of the model's."""
        return logits

    def _prefill_batch(
        self, requests: list[tuple[int, GenerationRequest]], reserved: _Reserved
    ) -> Prefill:
        """Rows for `requests`, their batched cache and attention mask, and each row's logits
        (the generator's return value; it yields the empty deltas of `_prefill_pass`).

        Each row starts from the cache that shares the longest token prefix with its prompt (its
        own, another key's, or nothing). Rows are prefilled together, in as few forward passes as
        possible: a row that would share a much longer prefix with another row of this batch
        waits for that row's pass (the first turn, where the M trajectories read the same few
        prompts), so a distinct prompt is prefilled once per batch. Before any pass, the memory
        the batch's caches will take, counted in this model's tokens, is reserved in the
        process's ledger (`_reserve_memory`) until the batch ends."""
        ids = []
        for _, request in requests:
            ids.append(self.encode(request.prompt))
            if not ids[-1]:
                raise ValueError("empty prompt")
        need = self._reserve_memory(ids, [request for _, request in requests])
        reserved.reservation = reserved.enter_context(need)
        owned = [self._take(request.key) for _, request in requests]
        done: list[_Row] = []
        passes: list[tuple[list[_Row], DynamicCache, torch.Tensor, torch.Tensor]] = []
        pending = list(range(len(requests)))
        while pending:
            chosen, plans, deferred = [], [], []
            for i in pending:
                plan = self._plan(ids[i], owned[i], done, requests[i][1].group)
                group = requests[i][1].group
                peers = [ids[j] for j in chosen if requests[j][1].group == group]
                if self._waits_for(peers, ids[i], plan[1]):
                    deferred.append(i)  # wait for that row: it will hold this prefix
                    continue
                chosen.append(i)
                plans.append(plan)
            items = [(requests[i], ids[i], plan) for i, plan in zip(chosen, plans, strict=True)]
            groups = by_length([len(row_ids) - plan[1] for _, row_ids, plan in items])
            for group in groups:
                rows, cache, mask, logits = yield from self._prefill_pass([items[g] for g in group])
                if deferred or len(groups) > 1 or passes:  # rows go to another pass: own caches
                    for b, row in enumerate(rows):
                        row.cache = split(cache, mask, b)
                    cache = mask = None
                passes.append((rows, cache, mask, logits))
                done += rows
            pending = deferred
        if len(passes) == 1:
            return passes[0]
        rows = [row for p in passes for row in p[0]]
        cache, mask = merge([row.cache for row in rows], self.model.device)
        return rows, cache, mask, torch.cat([p[3] for p in passes])

    def _plan(
        self, ids: list[int], owned: _Cached | None, done: Sequence[_Row], group: Hashable | None
    ) -> tuple[DynamicCache | None, int]:
        """The cache to start `ids` from and how many of its tokens to keep (at least one token
        is left to run, for logits): the request's own, or a longer-sharing one (`_donor`)."""
        keep = min(common_prefix(owned.ids, ids), len(ids) - 1) if owned is not None else 0
        source = owned.cache if owned is not None and keep else None
        with self._lock:
            donor = self._donor(ids, keep, done, group)
        if donor is not None:
            source, keep = donor
        return source, keep

    @staticmethod
    def _waits_for(peers: Sequence[list[int]], ids: list[int], keep: int) -> bool:
        """Whether a row starting from `keep` cached tokens waits for a later pass: a row of this
        pass (prompts `peers`, same group) shares more than `_MIN_SHARED` further tokens with it."""
        shared = max((common_prefix(p, ids) for p in peers), default=0)
        return shared > keep + _MIN_SHARED

    def _prefill_pass(
        self, items: list[tuple[tuple[int, GenerationRequest], list[int], tuple]]
    ) -> Prefill:
        """Forward passes over the new suffixes of several rows, returning (rows, cache, mask,
        logits) like one pass would.

        The rows' starting caches are merged left-padded to a common length, and the suffixes
        are left-padded to a common length after them: a shorter suffix leaves a masked gap
        between its cache and its tokens, which the mask carries through decoding and `split`
        removes. Position ids count real tokens only, so each row sees the positions it would
        see alone. The suffixes run in slices of at most `prefill_tokens` tokens over all rows
        (each slice reads the cache the ones before it wrote): a long prompt's activations stay
        small, and after each slice an empty delta hands control back to the caller, which may
        stop the run there (closing this generator) instead of after the whole prompt."""
        device = self.model.device
        caches, suffixes, rows = [], [], []
        for (index, request), ids, (source, keep) in items:
            # Views, never the source object: the forward pass extends the cache it is given.
            cache = DynamicCache() if source is None else view(source, keep)
            caches.append(cache)
            suffixes.append(ids[keep:])
            rng = torch.Generator().manual_seed(request.seed)
            rows.append(_Row(index, request, cache, list(ids), rng, prefill_tokens=len(ids) - keep))
        cache, cache_mask = merge(caches, self.model.device)
        width = max(len(s) for s in suffixes)
        fed = torch.zeros((len(rows), width), dtype=torch.long, device=device)
        fed_mask = torch.zeros((len(rows), width), dtype=torch.long, device=device)
        positions = torch.zeros((len(rows), width), dtype=torch.long, device=device)
        for b, (suffix, row) in enumerate(zip(suffixes, rows, strict=True)):
            start, pad = len(row.ids) - len(suffix), width - len(suffix)
            fed[b, pad:] = torch.tensor(suffix)
            fed_mask[b, pad:] = 1
            positions[b, pad:] = torch.arange(start, start + len(suffix))
        mask = torch.cat([cache_mask, fed_mask], dim=1)
        step = max(1, self.prefill_tokens // len(rows))
        for start in range(0, width, step):
            end = min(start + step, width)
            out = self.model(
                input_ids=fed[:, start:end],
                attention_mask=mask[:, : cache_mask.shape[1] + end],
                position_ids=positions[:, start:end],
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            )
            if end < width:
                yield Delta(rows[0].index, "")  # a point where the run may be stopped
        return rows, cache, mask, out.logits[:, -1, :]

    def _donor(
        self, ids: list[int], keep: int, batch_rows: Sequence[_Row], group: Hashable | None
    ) -> tuple[DynamicCache, int] | None:
        """The cache of `group` (other keys', this batch's prefilled rows) sharing the longest
        prefix with `ids`, if that beats `keep`, and how many tokens to keep. Under the lock."""
        best: DynamicCache | None = None
        candidates = [(c.cache, c.ids) for c in self._caches.values() if c.group == group]
        candidates += [(r.cache, r.ids) for r in batch_rows if r.request.group == group]
        for cache, cached_ids in candidates:
            if not cached_ids or cached_ids[0] != ids[0]:
                continue
            n = min(common_prefix(cached_ids, ids), len(ids) - 1, cache.get_seq_length())
            if n > keep:
                best, keep = cache, n
        return None if best is None else (best, keep)

    def _finish(self, row: _Row, cache: DynamicCache) -> Finished:
        """The row's output; its cache is kept under its key with every token fed through it."""
        self._keep(row.request.key, _Cached(cache, row.ids + row.decoder.fed, row.request.group))
        return row.decoder.finished(row.index, row.prefill_tokens)
