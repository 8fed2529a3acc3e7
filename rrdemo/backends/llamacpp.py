"""GGUF models in process through llama.cpp's low-level API: one context, many sequences.

One `llama_context` per model holds up to `n_seq_max` sequences, each in its own KV stream of
`n_ctx_seq` cells. Every request key, e.g. (run, trajectory, agent), owns one sequence id. On the
key's next turn the full text it reads is tokenized again; the longest common token prefix with
the sequence's ids is kept (`llama_memory_seq_rm` crops the rest) and only the new suffix is run.
A key may also start from another sequence that shares a longer prefix: `llama_memory_seq_cp`
copies that sequence's cells and the copy is cropped to the common prefix, so the prefix is not
computed again. The donor may be a cached key, a row of another call that is still decoding (the
Arena runs MAJ and RRMaj side by side: RRMaj's first turn copies the prompts MAJ has read), or
a request of the same call: that prefix is computed once, by the first of them, and the others
copy it in a second prefill wave. A cached donor whose cells the copy took almost all of is then
dropped (in RR the next writer of the same prompt supersedes the last one), which keeps streams
free. The rows of one call get consecutive sequence ids, so that a decode step over all of them is
one micro-batch (`Sequences.block`; a row whose own cells sit elsewhere moves them). The new
suffixes of all rows are prefilled in one call, shorter ones padded where that saves a micro-batch
(see `_prefill`), then every live row decodes one token per `llama_decode` step. Sampling (greedy, or temperature + top-p) runs in numpy with each
request's own seeded generator.

Heads. An agent's own prompt (question, instructions, injection: `GenerationRequest.head`) is
computed alone, in calls holding only its tokens, and kept across runs under the group `HEADS`
(the `MAX_HEADS` most recently used); every request may copy from it. So a prompt's cells are the
same whenever and beside whatever they are computed, and a run that asks what an earlier run
asked (the Arena's presets, a visitor pressing Run again) goes straight to decoding.

Reproducibility: the same requests in the same order give the same text, whatever ran before
(each call's batch shapes follow from its requests alone). Why a stream per sequence
(`kv_unified=False`) and no flash attention: in one shared cell pool a sequence's cells land
wherever there is room, attention then sums them in another order, and greedy text could change
with what else ran before; CPU flash attention sums differently for a one-token step than for a
prefill batch. In its own stream a sequence's cells always sit in position order from cell 0 and
plain attention does not depend on the batch, so a reused or copied prefix equals one computed
from scratch. A row's text can still depend on the rows it was batched with: the CPU matrix
kernels round a token's sums differently with the batch shape, which flips a greedy token at a
near-tie now and then (tests/rrdemo/backends/test_llamacpp_batching.py measures how often).

Each row's text and stop come from its `rrdemo.backends.row_decoder.RowDecoder` (the K-th-token
rule), fed every token with the bytes it adds (`piece`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Hashable, Iterator, Sequence
from pathlib import Path

import numpy as np

from rrdemo.backends.base import (
    Backend,
    Delta,
    Finished,
    GenerationOutput,
    GenerationRequest,
    render_prompt_text,
)
from rrdemo.backends.llamacpp_native import (
    N_BATCH,
    Batch,
    Vocab,
    create_context,
    idle_threads_sleep,
    quiet_llama_logs,
    sample_token,
)
from rrdemo.backends.llamacpp_rows import HEADS, Row, assign, padded_lengths, unique_keys
from rrdemo.backends.llamacpp_score import Scoring
from rrdemo.backends.llamacpp_sequences import Sequences
from rrdemo.backends.row_decoder import hard_cap
from rrdemo.backends.tokens import common_prefix
from rrdemo.errors import RRError

N_CTX_SEQ = 2048  # KV cells per sequence: the longest prompt + new tokens one request can have
N_SEQ_MAX = 32  # sequences (cached keys) per model; the least recently used is evicted beyond
# KV memory is N_SEQ_MAX x N_CTX_SEQ cells: 1.5 GB for SmolLM2-135M, 1.2 GB for Gemma 3 270M (f16).
MAX_HEADS = 8  # heads cached per model: two prompts a run (one injected, one clean), four runs


class LlamaCppBackend(Scoring, Backend):
    """A GGUF model run by llama.cpp in this process (see the module docstring); the benchmarks'
    variants (bench/variants.py) override `_assign` (prefix sharing) and `_allowed` (logits)."""

    def __init__(
        self,
        name: str,
        path: str | Path,
        *,
        chat: bool | None = None,
        eos_token_ids: Sequence[int] = (),
        n_ctx_seq: int | None = None,
        n_seq_max: int | None = None,
        n_threads: int | None = None,
    ) -> None:
        idle_threads_sleep()  # before OpenMP loads with the shared library
        import llama_cpp  # loads the shared library
        import llama_cpp.llama_cpp as ll

        quiet_llama_logs(llama_cpp)
        self._ll = ll
        self.name = name
        self.revision = None
        self.path = Path(path)
        if not self.path.is_file():
            raise RRError(f"GGUF file {str(self.path)!r} does not exist")
        ll.llama_backend_init()
        model_params = ll.llama_model_default_params()
        # Repacked weights (llama.cpp's default): +13% decode on the 1.5B (bench/README.md). Their
        # kernels round a prefill batch and a one-token step differently in the last bits, which
        # breaks no promise: the same requests still give the same text.
        model_params.use_extra_bufts = True
        self._model = ll.llama_model_load_from_file(str(self.path).encode(), model_params)
        if not self._model:
            raise RRError(
                f"llama.cpp could not load {str(self.path)!r} (not a GGUF model it knows)"
            )
        self._vocab = Vocab(ll, self._model)
        self.n_vocab = self._vocab.n_tokens
        n_ctx_seq = n_ctx_seq or int(os.environ.get("RRDEMO_LLAMA_N_CTX") or N_CTX_SEQ)
        n_seq_max = n_seq_max or int(os.environ.get("RRDEMO_LLAMA_SEQS") or N_SEQ_MAX)
        threads = n_threads or int(
            os.environ.get("RRDEMO_LLAMA_THREADS") or len(os.sched_getaffinity(0))
        )
        report: list[int] = []
        self._ctx = create_context(ll, self._model, name, n_ctx_seq, n_seq_max, threads, report)
        # What the context allocated (KV cells, compute scratch, logits), as llama.cpp reports it;
        # it stays allocated while the model is loaded, whatever runs (None: nothing reported).
        self.context_bytes: int | None = sum(report) or None
        self.n_ctx_seq = ll.llama_n_ctx_seq(self._ctx)
        self.n_seq_max = ll.llama_n_seq_max(self._ctx)
        self.max_context = min(self.n_ctx_seq, ll.llama_model_n_ctx_train(self._model))
        self.version = llama_cpp.__version__
        template = self._vocab.meta("tokenizer.chat_template")
        self.chat = bool(template) if chat is None else chat
        self._template = template if self.chat else None
        self.eos_token_ids = frozenset({*eos_token_ids, *self._vocab.end_of_generation()})
        self._seqs = Sequences(ll, ll.llama_get_memory(self._ctx), self.n_seq_max, name)
        self._lock = threading.RLock()
        self._live: dict[int, Row] = {}  # rows of calls still decoding, by id()
        self._batch = Batch(ll, N_BATCH, 1)

    def close(self) -> None:
        """Free the context and the weights (the backend is unusable afterwards)."""
        with self._lock:
            if self._ctx:
                self._batch.free()
                self._ll.llama_free(self._ctx)
                self._ll.llama_model_free(self._model)
                self._ctx = self._model = None

    def __del__(self) -> None:
        # A model the pool unloaded frees its weights once the last run holding it ends.
        with contextlib.suppress(Exception):
            self.close()

    # -- prompts and tokens ----------------------------------------------------------------------
    def render_prompt(self, user: str, system: str | None = None) -> str:
        if not self._template:
            return render_prompt_text(None, user, system)
        from rrdemo.backends.templates import render_gguf

        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]
        bos, eos = self._vocab.bos_text(), self._vocab.eos_text()
        hub = self.loaded_from == "hub"  # a template from the hub renders in the worker
        return render_gguf(self._template, self.name, messages, bos, eos, bounded=hub)

    def encode(self, text: str) -> list[int]:
        """Token ids of what the model reads: chat templates carry their own special tokens,
        base models get the vocabulary's usual prefix (e.g. <bos>)."""
        return self._vocab.tokenize(text, add_special=not self.chat)

    def count_tokens(self, text: str) -> int:
        return len(self._vocab.tokenize(text, add_special=False))

    def piece(self, token: int) -> bytes:
        """The bytes a generated token adds to the text (special tokens add none)."""
        return self._vocab.piece(token)

    def decode(self, tokens: Sequence[int]) -> str:
        return b"".join(self.piece(t) for t in tokens).decode("utf-8", "replace")

    def prefixes(self, text: str, every: int) -> list[tuple[int, str]]:
        ids = self._vocab.tokenize(text, add_special=False)
        cuts = [*range(every, len(ids), every), len(ids)] if ids else []
        return [(n, self.decode(ids[:n])) for n in cuts]

    # -- sequences -------------------------------------------------------------------------------
    def release(self, key_prefix: tuple = ()) -> None:
        with self._lock:
            self._seqs.release(key_prefix)

    def _check_open(self) -> None:
        if not self._ctx:
            raise RRError(f"{self.name}: the backend was closed")

    def _decode(self, entries: list) -> None:
        """One llama_decode of (token, position, sequence id, wants logits) entries."""
        self._batch.fill(entries)
        status = self._ll.llama_decode(self._ctx, self._batch.raw)
        if status != 0:  # 1: no room in a stream; cannot happen below max_context
            raise RRError(f"{self.name}: llama_decode failed with status {status}")

    def _logits(self, i: int) -> np.ndarray:
        ptr = self._ll.llama_get_logits_ith(self._ctx, i)
        return self._allowed(np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy())

    def _allowed(self, logits: np.ndarray) -> np.ndarray:
        """The logits the next token is drawn from: all of the model's."""
        return logits

    # -- generation ------------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        protect, rows = unique_keys(requests), []
        if not requests:
            return
        try:
            next_tokens = self._start(requests, protect, rows)
            yield from self._decode_loop(rows, next_tokens)
        finally:  # a failed or closed stream (the user pressed Stop) gives its sequences back
            self._end(rows)

    def _start(
        self, requests: Sequence[GenerationRequest], protect: set[Hashable], rows: list[Row]
    ) -> list[int]:
        """Rows for `requests` (appended to `rows`, so that `_end` frees what a failure left),
        prefilled and live; returns each row's first token."""
        with self._lock:
            self._check_open()
            self._setup(requests, protect, rows)
            next_tokens = self._prefill(rows)
            self._live.update((id(row), row) for row in rows)
        return next_tokens

    def _end(self, rows: list[Row]) -> None:
        """The rows of a call are over: finished ones stay cached under their keys, the others'
        sequences are freed."""
        with self._lock:
            for row in rows:
                self._live.pop(id(row), None)
                self._seqs.give_back(row.seq, kept=row.done)

    def _setup(
        self, requests: Sequence[GenerationRequest], protect: set[Hashable], rows: list[Row]
    ) -> None:
        """Give each request a sequence and the longest prefix of its ids that needs no compute:
        its own cells, a copy of another cached or decoding sequence, or (next wave) of an earlier
        row's. The rows get consecutive sequence ids (`Sequences.block`): a row whose own cells
        sit elsewhere moves them."""
        plans = []
        for request in requests:  # refuse before touching any sequence
            ids = self.encode(request.prompt)
            if not ids:
                raise ValueError("empty prompt")
            need = len(ids) + hard_cap(request.max_new_tokens, request.room)
            if need > self.max_context:
                raise RRError(
                    f"{self.name}: the prompt ({len(ids)} tokens) plus {request.max_new_tokens} new "
                    f"tokens needs {need} tokens; a sequence's context holds {self.max_context} "
                    "(RRDEMO_LLAMA_N_CTX); shorten the question or lower L"
                )
            plans.append((request, ids, None))
        for i, (request, ids, _) in enumerate(plans):
            own = self._seqs.cached.pop(request.key, None)
            if own is not None:
                self._seqs.busy.add(own.sid)
            plans[i] = (request, ids, own)
        try:
            computed = self._heads(plans, protect)
            self._assign(plans, protect, rows)
            for i, n in computed.items():  # a head computed for a row counts as its prefill
                rows[i].prefill_tokens += n
        except BaseException:  # e.g. more requests than sequences: the unused ones stay cached
            for request, _, own in plans[len(rows) :]:
                if own is not None:
                    self._seqs.keep(request.key, own)
            raise

    def _heads(self, plans: list, protect: set[Hashable]) -> dict[int, int]:
        """Make sure every new key's head (its agent's own prompt, `GenerationRequest.head`) is
        cached: computed alone, in calls of its own tokens only, so that its cells are the same
        whenever and beside whatever it is computed, and kept across runs (group `HEADS`, the
        `MAX_HEADS` most recently used). A request then copies its prompt's cells from there
        (`assign`): a run that asks what an earlier one asked skips the prompt's prefill, and its
        text does not depend on whether the head was cached or computed. Returns the tokens
        computed, by the index of the first plan that needed each head."""
        todo: dict[Hashable, tuple[int, list[int]]] = {}
        for i, (request, ids, own) in enumerate(plans):
            if not request.head or own is not None:  # own cells began from the head already
                continue
            # All but the head's last token: a row reading just its prompt runs that one itself.
            head = ids[: common_prefix(self.encode(request.prompt[: request.head]), ids) - 1]
            if len(head) < 2:
                continue
            key = (HEADS, hashlib.sha1(np.asarray(head, dtype=np.int64).tobytes()).hexdigest())
            protect.add(key)
            if key in self._seqs.cached:
                self._seqs.cached[key].used = time.monotonic()
            else:
                todo.setdefault(key, (i, head))
        for key, (_, head) in todo.items():
            seq = self._seqs.new(protect)
            try:
                for start in range(0, len(head), N_BATCH):
                    part = head[start : start + N_BATCH]
                    self._decode([(t, start + p, seq.sid, False) for p, t in enumerate(part)])
            except BaseException:
                self._seqs.give_back(seq, kept=False)
                raise
            seq.ids, seq.group, seq.used = head, HEADS, time.monotonic()
            self._seqs.keep(key, seq)
        idle = sorted(
            (s.used, k)
            for k, s in self._seqs.cached.items()
            if s.group == HEADS and k not in protect
        )
        n_heads = sum(s.group == HEADS for s in self._seqs.cached.values())
        for _, key in idle[: max(n_heads - MAX_HEADS, 0)]:
            self._seqs.drop(key)
        return {i: len(head) for i, head in todo.values()}

    def _assign(self, plans: list, protect: set[Hashable], rows: list[Row]) -> None:
        """A row and a sequence per plan (`llamacpp_rows.assign`: prefixes shared across keys)."""
        assign(self._seqs, self._live.values(), plans, protect, rows)

    def _prefill(self, rows: list[Row], read=None) -> list:
        """Run the rows' uncached prompt tokens, wave by wave, and sample each first token
        (or, given `read(row, logits)`, return what it reads off the last token's logits).

        All the rows of a wave run in one llama_decode call (several only past N_BATCH tokens),
        in sequence-id order. llama.cpp runs a micro-batch per length among them
        (`micro_batches`), so a shorter suffix is padded where that saves micro-batches worth
        more than the padding (`padded_lengths`): pad tokens repeat the row's last token after
        it, give no logits, and their cells are cropped right after the call.
        """
        firsts: list = [0] * len(rows)
        read = read or self._sample
        for wave in range(max(r.wave for r in rows) + 1):
            todo = sorted(
                ((b, row) for b, row in enumerate(rows) if row.wave == wave),
                key=lambda item: item[1].seq.sid,
            )
            for _, row in todo:
                if row.source is not None:
                    self._seqs.copy(row.source.seq.sid, row.seq.sid, row.cached)
            fed = padded_lengths(
                [len(row.ids) - row.cached for _, row in todo],
                [row.seq.sid for _, row in todo],
                [self.n_ctx_seq - row.cached for _, row in todo],
            )
            entries, last = [], {}  # last: entry index of each row's last real token -> b
            for (b, row), n in zip(todo, fed, strict=True):
                last[len(entries) + len(row.ids) - row.cached - 1] = b
                entries += [
                    (row.ids[min(p, len(row.ids) - 1)], p, row.seq.sid, p == len(row.ids) - 1)
                    for p in range(row.cached, row.cached + n)
                ]
            for start in range(0, len(entries), N_BATCH):
                self._decode(entries[start : start + N_BATCH])
                for i in range(start, min(start + N_BATCH, len(entries))):
                    if i in last:
                        firsts[last[i]] = read(rows[last[i]], self._logits(i - start))
            for (_, row), n in zip(todo, fed, strict=True):
                if row.cached + n > len(row.ids):
                    self._seqs.crop(row.seq.sid, len(row.ids))
        return firsts

    def _decode_loop(self, rows: list[Row], next_tokens: list[int]) -> Iterator[GenerationOutput]:
        while rows:
            keep = []
            for row, token in zip(rows, next_tokens, strict=True):
                outputs, alive = self._advance(row, token)
                yield from outputs
                if alive:
                    keep.append(row)
            rows = keep
            if not rows:
                return
            next_tokens = self._step(rows)

    def _advance(self, row: Row, token: int) -> tuple[list[GenerationOutput], bool]:
        """Give `row` its next sampled token: what it streams (new text, its end) and whether it
        decodes on. The one rule for every decoding loop (this call's, `llamacpp_flow.Flow`'s)."""
        decoder = row.decoder
        delta = decoder.step(token, self.piece(token), token in self.eos_token_ids, row.entropy)
        outputs: list[GenerationOutput] = [Delta(row.index, delta)] if delta else []
        if decoder.stop is not None:
            outputs.append(self._finish(row))
        return outputs, decoder.stop is None

    def _step(self, rows: list[Row]) -> list[int]:
        """One llama_decode of every row's last token, and each row's next token. In sequence-id
        order: consecutive ids run as one micro-batch."""
        with self._lock:
            order = sorted(range(len(rows)), key=lambda b: rows[b].seq.sid)
            self._decode(
                [
                    (r.decoder.tokens[-1], len(r.ids) + len(r.decoder.tokens) - 1, r.seq.sid, True)
                    for r in (rows[b] for b in order)
                ]
            )
            at = {b: i for i, b in enumerate(order)}
            return [self._sample(r, self._logits(at[b])) for b, r in enumerate(rows)]

    @staticmethod
    def _sample(row: Row, logits: np.ndarray) -> int:
        """The row's next token; under the `uncertainty` turn policy also its entropy."""
        row.entropy = row.decoder.entropy_of(logits)
        return sample_token(logits, row.request.sampling, row.rng)

    def _finish(self, row: Row) -> Finished:
        """The row's output; its sequence is cached under its key with every token fed."""
        with self._lock:
            row.seq.ids = row.ids + row.decoder.fed
            row.seq.used = time.monotonic()
            row.seq.group = row.request.group
            row.done = True
            self._seqs.keep(row.request.key, row.seq)
        return row.decoder.finished(row.index, row.prefill_tokens)
