"""llama.cpp's C API as the llama.cpp backend uses it: availability, logs, the context, the
vocabulary, batches, and sampling from the logits it returns.

`llama_cpp` is imported by the caller (`LlamaCppBackend`) and handed in as `ll`, so importing
this module never loads the shared library.
"""

from __future__ import annotations

import ctypes
import logging
import os
import re
import threading
from collections.abc import Sequence

import numpy as np

from rrdemo.config import Sampling
from rrdemo.errors import RRError

log = logging.getLogger("rrdemo.llamacpp")

N_BATCH = 2048  # tokens per llama_decode call (a longer prefill is split)
N_UBATCH = 512  # tokens per micro-batch (llama.cpp cuts a call into these)
_TOP_CANDIDATES = 64  # top-p looks at these first (as the transformers backend does)
_NUCLEUS_MARGIN = 1e-4


def idle_threads_sleep() -> None:
    """Make OpenMP's idle threads sleep instead of spinning, unless the user chose a policy.

    llama.cpp's CPU build runs its threads under OpenMP, whose threads spin after each parallel
    region by default. Two llama.cpp processes on 2 cores (a sweep beside the app, two shards)
    then spin against each other: measured with SmolLM2, 5 rows, 2 threads each, 35-45 tok/s per
    process spinning against 83 sleeping, while one process alone runs at 139-140 either way
    (bench/README.md, "Interactive"). OpenMP reads the setting when its library loads, so this
    runs before llama_cpp is first imported; a process that imported torch first already has
    torch's copy of libgomp loaded, and llama.cpp shares it: set the variable before starting
    such a process."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def available() -> str | None:
    """None when llama-cpp-python imports; otherwise why not (one line)."""
    idle_threads_sleep()
    try:
        import llama_cpp.llama_cpp  # noqa: F401
    except Exception as exc:  # ImportError, or OSError when the shared library does not load
        return f"{type(exc).__name__}: {exc}"
    return None


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
# What llama.cpp says it allocated for a context, e.g. "CPU KV buffer size =   360.00 MiB"
_BUFFER_SIZE = re.compile(r"\b(?:KV|RS|compute|output) buffer size =\s*([0-9.]+) MiB")
_REPORTS: list[list[int]] = []  # while a context is made: the buffer sizes reported, in bytes
_REPORTING = threading.Lock()  # one context made at a time while its report is read


def quiet_llama_logs(llama_cpp) -> None:
    """Send llama.cpp's own messages to logging: errors only, not the load-time chatter (but
    the buffer sizes a context reports as it is made are kept, `create_context`)."""
    if _LOG_HOOK:
        return

    @llama_cpp.llama_log_callback
    def hook(level: int, text: bytes, _data: ctypes.c_void_p) -> None:
        line = text.decode("utf-8", "replace")
        if _REPORTS and (size := _BUFFER_SIZE.search(line)):
            _REPORTS[-1].append(round(float(size.group(1)) * 2**20))
        if level == 4:  # GGML_LOG_LEVEL_ERROR (0 none, 1 debug, 2 info, 3 warn, 4 error)
            log.error("llama.cpp: %s", line.rstrip())

    _LOG_HOOK.append(hook)
    llama_cpp.llama_log_set(hook, ctypes.c_void_p(0))


def create_context(
    ll, model, name: str, n_ctx_seq: int, n_seq_max: int, threads: int, report: list | None = None
):
    """A context of `n_seq_max` streams of `n_ctx_seq` cells each, set up so that a reused or
    copied prefix gives the same logits as a fresh one. The sizes of the buffers llama.cpp
    allocates for it (KV cells, compute scratch, logits), as it reports them while it makes the
    context, are appended to `report` in bytes (nothing when its messages do not reach
    `quiet_llama_logs`'s hook)."""
    n_ctx = n_ctx_seq * n_seq_max
    params = ll.llama_context_default_params()
    params.n_ctx = n_ctx
    params.n_batch = N_BATCH
    params.n_ubatch = N_UBATCH
    params.n_seq_max = n_seq_max
    params.n_threads = params.n_threads_batch = threads
    params.kv_unified = (
        False  # a stream per sequence: cells in position order (see rrdemo.backends.llamacpp)
    )
    params.swa_full = True  # sliding-window layers keep every cell, so any prefix can be kept
    # Plain attention: llama.cpp's CPU flash attention sums in an order that depends on how
    # many tokens a step runs, so a copied or reused prefix would not equal a fresh one.
    params.flash_attn_type = ll.LLAMA_FLASH_ATTN_TYPE_DISABLED
    params.no_perf = True
    with _REPORTING:
        _REPORTS.append([])
        try:
            context = ll.llama_init_from_model(model, params)
        finally:
            sizes = _REPORTS.pop()
    if report is not None:
        report.extend(sizes)
    if not context:
        raise RRError(f"llama.cpp could not create a context of {n_ctx} tokens for {name}")
    return context


class Vocab:
    """A model's vocabulary and metadata: text to token ids and token ids back to bytes."""

    def __init__(self, ll, model) -> None:
        self._ll = ll
        self._model = model
        self.raw = ll.llama_model_get_vocab(model)
        self.n_tokens = ll.llama_vocab_n_tokens(self.raw)
        self._pieces: dict[int, bytes] = {}

    def end_of_generation(self) -> set[int]:
        """Every token that ends a generation (end-of-sequence, end-of-turn, ...)."""
        return {t for t in range(self.n_tokens) if self._ll.llama_vocab_is_eog(self.raw, t)}

    def bos_text(self) -> str:
        return self.special(self._ll.llama_vocab_bos(self.raw))

    def eos_text(self) -> str:
        return self.special(self._ll.llama_vocab_eos(self.raw))

    def meta(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(1 << 16)
        n = self._ll.llama_model_meta_val_str(self._model, key.encode(), buf, len(buf))
        return buf.value.decode("utf-8", "replace") if n >= 0 else None

    def special(self, token: int) -> str:
        buf = ctypes.create_string_buffer(256)
        n = self._ll.llama_token_to_piece(self.raw, token, buf, len(buf), 0, True)
        return buf.raw[: max(n, 0)].decode("utf-8", "replace")

    def tokenize(self, text: str, add_special: bool) -> list[int]:
        data = text.encode("utf-8")
        capacity = len(data) + 8
        tokens = (self._ll.llama_token * capacity)()
        n = self._ll.llama_tokenize(self.raw, data, len(data), tokens, capacity, add_special, True)
        if n < 0:  # never more tokens than bytes (+ specials), but be safe
            tokens = (self._ll.llama_token * -n)()
            n = self._ll.llama_tokenize(self.raw, data, len(data), tokens, -n, add_special, True)
        return list(tokens[:n])

    def piece(self, token: int) -> bytes:
        """The bytes a generated token adds to the text (special tokens add none)."""
        cached = self._pieces.get(token)
        if cached is None:
            buf = ctypes.create_string_buffer(64)
            n = self._ll.llama_token_to_piece(self.raw, token, buf, len(buf), 0, False)
            if n < 0:
                buf = ctypes.create_string_buffer(-n)
                n = self._ll.llama_token_to_piece(self.raw, token, buf, len(buf), 0, False)
            cached = self._pieces[token] = buf.raw[:n]
        return cached


class Batch:
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
