"""GGUF models in process through llama.cpp's low-level API: one context, many sequences.

One `llama_context` per model holds up to `n_seq_max` sequences, each in its own KV stream of
`n_ctx_seq` cells. Every request key, e.g. (run, trajectory, agent), owns one sequence id. On the
key's next turn the full text it reads is tokenized again; the longest common token prefix with
the sequence's ids is kept (`llama_memory_seq_rm` crops the rest) and only the new suffix is run.
A key may also start from another sequence that shares a longer prefix: `llama_memory_seq_cp`
copies that sequence's cells and the copy is cropped to the common prefix, so the prefix is not
computed again. A prefix shared with another request of the same call is computed once, by the
first of them; the others copy it in a second prefill wave. Each row's new suffix is prefilled in
its own call (see `_prefill`), then every live row decodes one token per `llama_decode` step. Sampling
(greedy, or temperature + top-p) runs in numpy with each request's own seeded generator.

Why a stream per sequence (`kv_unified=False`) and no flash attention: in one shared cell pool a
sequence's cells land wherever there is room, attention then sums them in another order, and
greedy text could change with what else ran before; CPU flash attention sums differently for a
one-token step than for a prefill batch. In its own stream a sequence's cells always sit in
position order from cell 0, and plain attention does not depend on the batch, so a text depends
only on its tokens: batched equals one by one, reused or copied prefixes equal from scratch.

A request's `max_new_tokens` is a soft end: when the token that reaches it stops in the middle of
a UTF-8 character (byte-fallback tokens carry one byte each), decoding goes on until the character
is complete, at most `UTF8_EXTRA_TOKENS` more tokens; `n_tokens` counts them. A turn therefore
never ends inside a character and no U+FFFD ever comes from a split. A request with a turn policy
(`GenerationRequest.turn`, rrdemo.turns) may end earlier: after a sentence end, or before a token
whose next-token entropy passes the threshold (that token is then not written).
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
import time
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rrdemo.backends.base import (
    Backend,
    Delta,
    Finished,
    GenerationOutput,
    GenerationRequest,
    keys_with_prefix,
)
from rrdemo.config import Sampling
from rrdemo.errors import RRError
from rrdemo.turns import entropy_nats, turn_over

log = logging.getLogger("rrdemo.llamacpp")

N_CTX_SEQ = 2048  # KV cells per sequence: the longest prompt + new tokens one request can have
N_SEQ_MAX = 32  # sequences (cached keys) per model; the least recently used is evicted beyond
# KV memory is N_SEQ_MAX x N_CTX_SEQ cells: 1.5 GB for SmolLM2-135M, 1.2 GB for Gemma 3 270M (f16).
N_BATCH = 2048  # tokens per llama_decode call (a longer prefill is split)
UTF8_EXTRA_TOKENS = 3  # a UTF-8 character has at most 4 bytes: 3 more one-byte tokens finish it
_TOP_CANDIDATES = 64  # top-p looks at these first (as the transformers backend does)
_NUCLEUS_MARGIN = 1e-4


def available() -> str | None:
    """None when llama-cpp-python imports; otherwise why not (one line)."""
    try:
        import llama_cpp.llama_cpp  # noqa: F401, PLC0415
    except Exception as exc:  # ImportError, or OSError when the shared library does not load
        return f"{type(exc).__name__}: {exc}"
    return None


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def incomplete_tail(data: bytes) -> int:
    """How many bytes at the end of `data` start a UTF-8 character that is not complete yet."""
    for i in range(1, min(4, len(data)) + 1):
        byte = data[-i]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back for the lead byte
            continue
        need = (
            2
            if byte & 0xE0 == 0xC0
            else 3
            if byte & 0xF0 == 0xE0
            else 4
            if byte & 0xF8 == 0xF0
            else 1
        )
        return i if need > i else 0
    return 0


def sample_token(logits: np.ndarray, sampling: Sampling, rng: np.random.Generator) -> int:
    """Greedy at temperature 0; otherwise temperature + nucleus (top-p) sampling from `rng`."""
    if sampling.temperature == 0:
        return int(np.argmax(logits))
    z = logits.astype(np.float64) / sampling.temperature
    probs = np.exp(z - z.max())
    probs /= probs.sum()
    if sampling.top_p < 1.0:
        k = min(_TOP_CANDIDATES, probs.size)
        order = np.argpartition(-probs, k - 1)[:k]
        order = order[np.argsort(-probs[order], kind="stable")]
        if probs[order].sum() <= sampling.top_p + _NUCLEUS_MARGIN:
            order = np.argsort(-probs, kind="stable")
        head = probs[order]
        head = head[(np.cumsum(head) - head) <= sampling.top_p]  # the nucleus
        cdf = np.cumsum(head)
        return int(
            order[min(int(np.searchsorted(cdf, rng.random() * cdf[-1], "right")), head.size - 1)]
        )
    cdf = np.cumsum(probs)
    return int(min(int(np.searchsorted(cdf, rng.random() * cdf[-1], "right")), probs.size - 1))


_LOG_HOOK: list = []  # the ctypes callback must outlive the call that installs it


def _quiet_llama_logs(llama_cpp) -> None:
    """Send llama.cpp's own messages to logging: errors only, not the load-time chatter."""
    if _LOG_HOOK:
        return

    @llama_cpp.llama_log_callback
    def hook(level: int, text: bytes, _data: ctypes.c_void_p) -> None:
        if level == 4:  # GGML_LOG_LEVEL_ERROR (0 none, 1 debug, 2 info, 3 warn, 4 error)
            log.error("llama.cpp: %s", text.decode("utf-8", "replace").rstrip())

    _LOG_HOOK.append(hook)
    llama_cpp.llama_log_set(hook, ctypes.c_void_p(0))


@dataclass
class _Seq:
    """A sequence id of the KV cache and the token ids its cells hold (positions 0..len-1)."""

    sid: int
    ids: list[int]
    used: float = 0.0  # last use, for eviction


@dataclass
class _Row:
    """One request while it is being prefilled and decoded."""

    index: int
    request: GenerationRequest
    seq: _Seq
    ids: list[int]  # prompt ids; generated tokens are fed after them
    cached: int  # prompt tokens whose cells are there (or copied) before this row's prefill
    rng: np.random.Generator
    wave: int = 0  # prefill wave: a row copying an earlier row's prefix runs after it
    source: _Row | None = None  # that earlier row
    prefill_tokens: int = 0
    new: list[int] = field(default_factory=list)
    pieces: list[bytes] = field(default_factory=list)
    shown: int = 0  # bytes already streamed as deltas
    done: bool = False  # finished: its sequence belongs to the cache now
    entropy: float | None = None  # of the logits the next token was drawn from (uncertainty policy)


class _Batch:
    """A `llama_batch` whose token, position and output flag arrays numpy can fill."""

    def __init__(self, ll, capacity: int, n_seq_max: int) -> None:
        self.ll = ll
        self.capacity = capacity
        self.raw = ll.llama_batch_init(capacity, 0, n_seq_max)
        self.token = np.ctypeslib.as_array(self.raw.token, shape=(capacity,))
        self.pos = np.ctypeslib.as_array(self.raw.pos, shape=(capacity,))
        self.n_seq = np.ctypeslib.as_array(self.raw.n_seq_id, shape=(capacity,))
        self.logits = np.ctypeslib.as_array(self.raw.logits, shape=(capacity,))

    def fill(self, entries: Sequence[tuple[int, int, int, bool]]) -> None:
        """(token, position, sequence id, wants logits) per entry."""
        for i, (token, pos, sid, out) in enumerate(entries):
            self.token[i], self.pos[i], self.n_seq[i], self.logits[i] = token, pos, 1, out
            self.raw.seq_id[i][0] = sid
        self.raw.n_tokens = len(entries)

    def free(self) -> None:
        self.ll.llama_batch_free(self.raw)


class LlamaCppBackend(Backend):
    """A GGUF model run by llama.cpp in this process (see the module docstring).

    `suppress_eos` is for benchmarks only: requests never end early, so each decodes exactly
    `max_new_tokens` tokens. `share_prefixes=False` measures what copying prefixes buys.
    """

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
        share_prefixes: bool = True,
        suppress_eos: bool = False,
    ) -> None:
        import llama_cpp  # noqa: PLC0415 - loads the shared library
        import llama_cpp.llama_cpp as ll  # noqa: PLC0415

        _quiet_llama_logs(llama_cpp)
        self._ll = ll
        self.name = name
        self.revision = None
        self.path = Path(path)
        if not self.path.is_file():
            raise RRError(f"GGUF file {str(self.path)!r} does not exist")
        self.share_prefixes = share_prefixes
        self.suppress_eos = suppress_eos
        ll.llama_backend_init()
        model_params = ll.llama_model_default_params()
        # No repacked weights: their kernels differ between one-token steps and prefill batches.
        model_params.use_extra_bufts = False
        self._model = ll.llama_model_load_from_file(str(self.path).encode(), model_params)
        if not self._model:
            raise RRError(
                f"llama.cpp could not load {str(self.path)!r} (not a GGUF model it knows)"
            )
        self._vocab = ll.llama_model_get_vocab(self._model)
        self.n_vocab = ll.llama_vocab_n_tokens(self._vocab)
        n_ctx_seq = n_ctx_seq or int(os.environ.get("RRDEMO_LLAMA_N_CTX") or N_CTX_SEQ)
        n_seq_max = n_seq_max or int(os.environ.get("RRDEMO_LLAMA_SEQS") or N_SEQ_MAX)
        n_ctx = n_ctx_seq * n_seq_max
        threads = n_threads or int(
            os.environ.get("RRDEMO_LLAMA_THREADS") or len(os.sched_getaffinity(0))
        )
        params = ll.llama_context_default_params()
        params.n_ctx = n_ctx
        params.n_batch = N_BATCH
        params.n_ubatch = 512
        params.n_seq_max = n_seq_max
        params.n_threads = params.n_threads_batch = threads
        params.kv_unified = False  # a stream per sequence: cells in position order (see above)
        params.swa_full = True  # sliding-window layers keep every cell, so any prefix can be kept
        # Plain attention: llama.cpp's CPU flash attention sums in an order that depends on how
        # many tokens a step runs, so a copied or reused prefix would not equal a fresh one.
        params.flash_attn_type = ll.LLAMA_FLASH_ATTN_TYPE_DISABLED
        params.no_perf = True
        self._ctx = ll.llama_init_from_model(self._model, params)
        if not self._ctx:
            raise RRError(f"llama.cpp could not create a context of {n_ctx} tokens for {name}")
        self._mem = ll.llama_get_memory(self._ctx)
        self.n_ctx_seq = ll.llama_n_ctx_seq(self._ctx)
        self.n_seq_max = ll.llama_n_seq_max(self._ctx)
        self.max_context = min(self.n_ctx_seq, ll.llama_model_n_ctx_train(self._model))
        self.version = llama_cpp.__version__
        template = self._meta("tokenizer.chat_template")
        self.chat = bool(template) if chat is None else chat
        self._template = template if self.chat else None
        self.eos_token_ids = frozenset(
            {
                *eos_token_ids,
                *(t for t in range(self.n_vocab) if ll.llama_vocab_is_eog(self._vocab, t)),
            }
        )
        self._eos_list = np.array(sorted(self.eos_token_ids), dtype=np.int64)
        self._pieces: dict[int, bytes] = {}
        self._seqs: dict[Hashable, _Seq] = {}
        self._free = list(range(self.n_seq_max - 1, -1, -1))
        self._busy: set[int] = set()  # sequence ids of rows being decoded (never evicted)
        self._lock = threading.RLock()
        self._batch = _Batch(ll, N_BATCH, 1)

    def close(self) -> None:
        """Free the context and the weights (the backend is unusable afterwards)."""
        with self._lock:
            if self._ctx:
                self._batch.free()
                self._ll.llama_free(self._ctx)
                self._ll.llama_model_free(self._model)
                self._ctx = self._model = None

    # -- prompts and tokens ----------------------------------------------------------------------
    def _meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(1 << 16)
        n = self._ll.llama_model_meta_val_str(self._model, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", "replace") if n >= 0 else None

    def _special(self, token: int) -> str:
        buf = ctypes.create_string_buffer(256)
        n = self._ll.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, True)
        return buf.raw[: max(n, 0)].decode("utf-8", "replace")

    def render_prompt(self, user: str, system: str | None = None) -> str:
        if not self._template:
            from rrdemo.backends.base import render_prompt_text  # noqa: PLC0415

            return render_prompt_text(None, user, system)
        from jinja2.sandbox import ImmutableSandboxedEnvironment  # noqa: PLC0415

        def raise_exception(message: str) -> None:
            raise RRError(f"{self.name}'s chat template refused the prompt: {message}")

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.globals["raise_exception"] = raise_exception
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]
        return env.from_string(self._template).render(
            messages=messages,
            add_generation_prompt=True,
            bos_token=self._special(self._ll.llama_vocab_bos(self._vocab)),
            eos_token=self._special(self._ll.llama_vocab_eos(self._vocab)),
        )

    def _tokenize(self, text: str, add_special: bool) -> list[int]:
        data = text.encode("utf-8")
        capacity = len(data) + 8
        tokens = (self._ll.llama_token * capacity)()
        n = self._ll.llama_tokenize(
            self._vocab, data, len(data), tokens, capacity, add_special, True
        )
        if n < 0:  # never more tokens than bytes (+ specials), but be safe
            tokens = (self._ll.llama_token * -n)()
            n = self._ll.llama_tokenize(self._vocab, data, len(data), tokens, -n, add_special, True)
        return list(tokens[:n])

    def encode(self, text: str) -> list[int]:
        """Token ids of what the model reads: chat templates carry their own special tokens,
        base models get the vocabulary's usual prefix (e.g. <bos>)."""
        return self._tokenize(text, add_special=not self.chat)

    def count_tokens(self, text: str) -> int:
        return len(self._tokenize(text, add_special=False))

    def piece(self, token: int) -> bytes:
        """The bytes a generated token adds to the text (special tokens add none)."""
        cached = self._pieces.get(token)
        if cached is None:
            buf = ctypes.create_string_buffer(64)
            n = self._ll.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, False)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = self._ll.llama_token_to_piece(self._vocab, token, buf, len(buf), 0, False)
            cached = self._pieces[token] = buf.raw[:n]
        return cached

    def decode(self, tokens: Sequence[int]) -> str:
        return b"".join(self.piece(t) for t in tokens).decode("utf-8", "replace")

    # -- sequences -------------------------------------------------------------------------------
    def cached_keys(self) -> list[Hashable]:
        return list(self._seqs)

    def free_sequences(self) -> int:
        return len(self._free)

    def release(self, key_prefix: tuple = ()) -> None:
        with self._lock:
            for key in keys_with_prefix(list(self._seqs), key_prefix):
                self._drop(key)

    def _drop(self, key: Hashable) -> None:
        seq = self._seqs.pop(key)
        self._ll.llama_memory_seq_rm(self._mem, seq.sid, -1, -1)
        self._free.append(seq.sid)

    def _evict_one(self, protect: set[Hashable]) -> bool:
        """Drop the least recently used cached key that no live row needs; False if none."""
        idle = [
            (s.used, k)
            for k, s in self._seqs.items()
            if k not in protect and s.sid not in self._busy
        ]
        if not idle:
            return False
        self._drop(min(idle, key=lambda x: x[0])[1])
        return True

    def _new_seq(self, protect: set[Hashable]) -> _Seq:
        if not self._free and not self._evict_one(protect):
            raise RRError(f"{self.name}: more than {self.n_seq_max} requests at once; lower N or M")
        return _Seq(self._free.pop(), [])

    def _decode(self, entries: list) -> None:
        """One llama_decode of (token, position, sequence id, wants logits) entries."""
        self._batch.fill(entries)
        status = self._ll.llama_decode(self._ctx, self._batch.raw)
        if status != 0:  # 1: no room in a stream; cannot happen below max_context
            raise RRError(f"{self.name}: llama_decode failed with status {status}")

    def _logits(self, i: int) -> np.ndarray:
        ptr = self._ll.llama_get_logits_ith(self._ctx, i)
        logits = np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()
        if self.suppress_eos and self._eos_list.size:
            logits[self._eos_list] = -np.inf
        return logits

    # -- generation ------------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        keys = [r.key for r in requests]
        if len(set(keys)) != len(keys):
            raise ValueError("two requests of one call share a key")
        if not requests:
            return
        protect, rows = set(keys), []
        try:
            with self._lock:
                if not self._ctx:
                    raise RRError(f"{self.name}: the backend was closed")
                self._setup(requests, protect, rows)
                next_tokens = self._prefill(rows)
            yield from self._decode_loop(rows, next_tokens)
        finally:  # a failed or closed stream (the user pressed Stop) gives its sequences back
            with self._lock:
                for row in rows:
                    self._busy.discard(row.seq.sid)
                    if not row.done:
                        self._ll.llama_memory_seq_rm(self._mem, row.seq.sid, -1, -1)
                        self._free.append(row.seq.sid)

    def _setup(
        self, requests: Sequence[GenerationRequest], protect: set[Hashable], rows: list[_Row]
    ) -> None:
        """Give each request a sequence and the longest prefix of its ids that needs no compute:
        its own cells, a copy of another cached sequence, or (next wave) of an earlier row's."""
        now = time.monotonic()
        for index, request in enumerate(requests):
            ids = self.encode(request.prompt)
            if not ids:
                raise ValueError("empty prompt")
            need = len(ids) + request.max_new_tokens + UTF8_EXTRA_TOKENS
            if need > self.max_context:
                raise RRError(
                    f"{self.name}: the prompt ({len(ids)} tokens) plus {request.max_new_tokens} new "
                    f"tokens needs {need} tokens; a sequence's context holds {self.max_context} "
                    "(RRDEMO_LLAMA_N_CTX); shorten the question or lower L"
                )
            seq = self._seqs.pop(request.key, None)
            keep = min(_common_prefix(seq.ids, ids), len(ids) - 1) if seq else 0
            if seq is None:
                seq = self._new_seq(protect)  # may evict an idle key: before choosing a donor
            row = _Row(index, request, seq, ids, keep, np.random.default_rng(request.seed))
            self._busy.add(seq.sid)
            donor = self._donor(ids, keep, rows) if self.share_prefixes else None
            rows.append(row)
            if donor is None:
                self._ll.llama_memory_seq_rm(self._mem, seq.sid, keep, -1)
            elif isinstance(donor[0], _Row):  # computed in this call: copy it once it is there
                row.source, row.cached = donor
                row.wave = row.source.wave + 1
                self._ll.llama_memory_seq_rm(self._mem, seq.sid, -1, -1)
            else:
                row.cached = donor[1]
                self._copy(donor[0].sid, seq.sid, row.cached)
            row.prefill_tokens = len(ids) - row.cached
            seq.used = now

    def _copy(self, source: int, target: int, n: int) -> None:
        """Make sequence `target` hold the first `n` cells of sequence `source`."""
        self._ll.llama_memory_seq_rm(self._mem, target, -1, -1)
        self._ll.llama_memory_seq_cp(self._mem, source, target, -1, -1)  # whole stream only
        self._ll.llama_memory_seq_rm(self._mem, target, n, -1)

    def _donor(self, ids: list[int], keep: int, rows: list[_Row]) -> tuple[object, int] | None:
        """The cached sequence or earlier row sharing the longest prefix with `ids`, if it beats `keep`."""
        best = None
        candidates = [(s, s.ids) for s in self._seqs.values()] + [(r, r.ids) for r in rows]
        for source, source_ids in candidates:
            if not source_ids or source_ids[0] != ids[0]:
                continue
            n = min(_common_prefix(source_ids, ids), len(ids) - 1, len(source_ids))
            if n > keep:
                best, keep = source, n
        return (best, keep) if best is not None else None

    def _prefill(self, rows: list[_Row]) -> list[int]:
        """Run the rows' uncached prompt tokens, wave by wave, and sample each first token.

        Each row's suffix is its own llama_decode call (split at N_BATCH): a batch mixing
        sequences of different lengths is cut into other pieces, whose sums round differently.
        """
        firsts = [0] * len(rows)
        for wave in range(max(r.wave for r in rows) + 1):
            for b, row in enumerate(rows):
                if row.wave != wave:
                    continue
                if row.source is not None:
                    self._copy(row.source.seq.sid, row.seq.sid, row.cached)
                for start in range(row.cached, len(row.ids), N_BATCH):
                    end = min(start + N_BATCH, len(row.ids))
                    self._decode(
                        [
                            (row.ids[p], p, row.seq.sid, p == len(row.ids) - 1)
                            for p in range(start, end)
                        ]
                    )
                firsts[b] = self._sample(row, self._logits(end - start - 1))
        return firsts

    def _decode_loop(self, rows: list[_Row], next_tokens: list[int]) -> Iterator[GenerationOutput]:
        while rows:
            keep = []
            for row, token in zip(rows, next_tokens, strict=True):
                if self._uncertain(row):  # leave this token to the next writer
                    yield self._finish(row, "length", fed_all=True)
                    continue
                row.new.append(token)
                eos = token in self.eos_token_ids
                if not eos:
                    row.pieces.append(self.piece(token))
                    delta = self._delta(row)
                    if delta:
                        yield Delta(row.index, delta)
                if eos or self._at_end(row):
                    yield self._finish(row, "eos" if eos else "length")
                else:
                    keep.append(row)
            rows = keep
            if not rows:
                return
            with self._lock:
                entries = [(r.new[-1], len(r.ids) + len(r.new) - 1, r.seq.sid, True) for r in rows]
                self._decode(entries)
                next_tokens = [self._sample(r, self._logits(b)) for b, r in enumerate(rows)]

    @staticmethod
    def _sample(row: _Row, logits: np.ndarray) -> int:
        """The row's next token; under the `uncertainty` turn policy also its entropy."""
        if row.request.turn is not None and row.request.turn.needs_entropy:
            row.entropy = entropy_nats(logits)
        return sample_token(logits, row.request.sampling, row.rng)

    def _uncertain(self, row: _Row) -> bool:
        """Under the `uncertainty` turn policy: the turn is over before the sampled token."""
        policy, n = row.request.turn, len(row.new)
        if policy is None or not policy.needs_entropy or row.entropy is None:
            return False
        if n < policy.k_min or n >= row.request.max_new_tokens:
            return False
        if incomplete_tail(b"".join(row.pieces)):
            return False
        return turn_over(policy, n, "", row.entropy)

    def _at_end(self, row: _Row) -> bool:
        """max_new_tokens reached, and the text does not stop inside a character (soft end); or,
        under a `sentence` turn policy, the turn's text ends a sentence after K_min tokens."""
        extra = len(row.new) - row.request.max_new_tokens
        if extra < 0:
            policy = row.request.turn
            if policy is None or policy.kind != "sentence":
                return False
            data = b"".join(row.pieces)
            if incomplete_tail(data):
                return False
            return turn_over(policy, len(row.new), data.decode("utf-8", "replace"))
        return extra >= UTF8_EXTRA_TOKENS or not incomplete_tail(b"".join(row.pieces))

    def _delta(self, row: _Row) -> str:
        data = b"".join(row.pieces)
        end = len(data) - incomplete_tail(data)
        if end <= row.shown:
            return ""
        delta = data[row.shown : end].decode("utf-8", "replace")
        row.shown = end
        return delta

    def _finish(self, row: _Row, reason: str, fed_all: bool = False) -> Finished:
        generated = row.new[:-1] if reason == "eos" else row.new
        data = b"".join(row.pieces)
        data = data[: len(data) - incomplete_tail(data)]  # only after UTF8_EXTRA_TOKENS failed
        with self._lock:
            # Everything but the last sampled token has been fed through the model (all of them
            # when the turn ended before writing another one: `fed_all`).
            row.seq.ids = row.ids + (row.new if fed_all else row.new[:-1])
            row.seq.used = time.monotonic()
            row.done = True
            self._seqs[row.request.key] = row.seq
            self._busy.discard(row.seq.sid)
        return Finished(
            index=row.index,
            text=data.decode("utf-8", "replace"),
            n_tokens=len(generated),
            finish_reason=reason,  # type: ignore[arg-type]
            prefill_tokens=row.prefill_tokens,
            decode_tokens=len(row.new),
        )
