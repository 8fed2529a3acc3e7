"""Continuous batching on llama.cpp: the `generate` calls of many threads share every decoding step.

A plain `LlamaCppBackend.generate` call decodes its own rows until the last of them ends, and a
row that ends early leaves its place idle. A `Flow` runs one driver thread per backend instead.
A thread's `generate(requests)` queues its call and reads its own outputs back as they come.
Before every decoding step the driver admits the waiting calls, in the order they came, while
their rows fit in `width` (a call is admitted whole, and its rows prefill together as in a plain
call); then one `llama_decode` runs a token of every live row of every call. A row that ends
leaves the step at once, and the next waiting call takes its place in the next one: while work
is queued no place idles (calibration: the next answers; a sweep: other units' MAJ answers and
RR turns, `rrdemo.runs.runner`).

What a call writes does not depend on its company: each request samples with its own seeded
generator, its prompt's cells are what a plain call would compute (prefill runs per call, the
agents' heads alone), and a row's text can only differ by the float effects of the decoding
step's batch shape that tests/rrdemo/backends/test_llamacpp_batching.py measures.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from itertools import pairwise

from rrdemo.backends.base import Finished, GenerationOutput, GenerationRequest
from rrdemo.backends.llamacpp import MAX_HEADS
from rrdemo.backends.llamacpp_rows import Row, unique_keys

_END = object()  # a call's last item: every row of it is done


class _FlowCall:
    """One thread's `generate` call: its requests, its rows once admitted, its outputs' queue."""

    def __init__(self, requests: Sequence[GenerationRequest]) -> None:
        self.requests = list(requests)
        self.rows: list[Row] = []
        self.left = len(self.requests)  # rows not finished yet
        self.outputs: queue.SimpleQueue = queue.SimpleQueue()
        self.cancelled = False  # the caller stopped reading (Stop, an error in its thread)
        self.over = False  # its rows are handed back and its stream ended


class Flow:
    """Continuous batching over one `LlamaCppBackend` (see the module docstring); at most
    `width` rows decode in one step (a call with more rows runs alone)."""

    def __init__(self, backend, width: int) -> None:
        if width < 1:
            raise ValueError(f"width must be at least 1, got {width}")
        self.backend = backend
        self.width = width
        self._cond = threading.Condition()
        self._waiting: deque[_FlowCall] = deque()
        self._closed = False
        self._driver: threading.Thread | None = None
        self._calls: list[_FlowCall] = []  # admitted calls (for the driver's last resort)
        # What the steps held, for the efficiency benchmark: decoding steps run, the rows they
        # decoded in all, and the runs of consecutive sequence ids (llama.cpp's micro-batches).
        self.steps = self.rows_decoded = self.micro_batches = 0

    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        """The outputs of `requests`, as `LlamaCppBackend.generate` streams them."""
        if not requests:
            return
        unique_keys(requests)  # refuse in the caller's thread, before queueing
        call = _FlowCall(requests)
        with self._cond:
            if self._closed:
                raise RuntimeError("the flow is closed")
            self._waiting.append(call)
            if self._driver is None:
                self._driver = threading.Thread(target=self._drive, daemon=True, name="flow")
                self._driver.start()
            self._cond.notify()
        try:
            while (item := call.outputs.get()) is not _END:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            call.cancelled = True  # the driver drops rows still decoding at its next step

    def close(self) -> None:
        """Stop the driver once the calls under way are done (new calls are refused)."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            driver = self._driver
        if driver is not None:
            driver.join()

    # -- the driver ------------------------------------------------------------------------------
    def _admit(self, n_live: int) -> list[_FlowCall] | None:
        """The waiting calls that fit beside `n_live` rows (waiting while there is nothing to
        do); None once the flow is closed and idle."""
        with self._cond:
            while not self._waiting and not n_live and not self._closed:
                self._cond.wait()
            if not self._waiting and not n_live:
                return None
            admitted: list[_FlowCall] = []
            while self._waiting and (
                n_live == 0 or n_live + len(self._waiting[0].requests) <= self.width
            ):
                call = self._waiting.popleft()
                admitted.append(call)
                n_live += len(call.requests)
            return admitted

    def _drive(self) -> None:
        try:
            self._loop()
        except BaseException as error:  # a bug of the loop itself: no caller may wait forever
            with self._cond:
                self._closed = True
                waiting, self._waiting = list(self._waiting), deque()
            for call in [*self._calls, *waiting]:
                self._end(call, error)  # each caller raises it in its own thread

    def _loop(self) -> None:
        live: list[tuple[_FlowCall, Row, int]] = []  # rows with the token they are given next
        while (admitted := self._admit(len(live))) is not None:
            self._calls = [c for c in self._calls if not c.over] + admitted
            for call in admitted:
                try:
                    keys = {r.key for r in call.requests}
                    firsts = self.backend._start(call.requests, keys, call.rows)
                except BaseException as error:  # e.g. a prompt longer than the context
                    self._end(call, error)
                    continue
                live += [(call, row, t) for row, t in zip(call.rows, firsts, strict=True)]
            going: list[tuple[_FlowCall, Row]] = []
            for call, row, token in live:
                if call.over:
                    continue
                if call.cancelled:
                    self._end(call)
                    continue
                try:
                    outputs, alive = self.backend._advance(row, token)
                except BaseException as error:
                    self._end(call, error)
                    continue
                for output in outputs:
                    call.outputs.put(output)
                    call.left -= isinstance(output, Finished)
                if alive:
                    going.append((call, row))
                elif call.left == 0:
                    self._end(call)
            live = []
            going = [(c, r) for c, r in going if not c.over]
            if not going:
                continue
            rows = [r for _, r in going]
            try:
                tokens = self.backend._step(rows)
            except BaseException as error:  # the model failed: every call in the step hears it
                for call in {id(c): c for c, _ in going}.values():
                    self._end(call, error)
                continue
            sids = sorted(r.seq.sid for r in rows)
            self.steps += 1
            self.rows_decoded += len(rows)
            self.micro_batches += 1 + sum(b != a + 1 for a, b in pairwise(sids))
            live = [(c, r, t) for (c, r), t in zip(going, tokens, strict=True)]

    def _end(self, call: _FlowCall, error: BaseException | None = None) -> None:
        """A call is over (every row finished, its reader left, or `error`): its finished rows
        stay cached, the others' sequences are freed, and its stream ends (raising `error`)."""
        if call.over:
            return
        call.over = True
        try:
            if call.rows:
                self.backend._end(call.rows)
        finally:  # the caller hears the end whatever freeing its rows did
            call.outputs.put(_END if error is None else error)


class Flows:
    """Routes threads' `generate` calls (`rrdemo.runs.gang.GangModels` wraps the backends): to a
    `Flow` per llama.cpp backend, made on first use; any other backend runs one call at a time."""

    def __init__(self, width: int | None = None) -> None:
        self.width = width  # None: the backend's sequences less the heads it keeps
        self.flows: dict[int, Flow] = {}
        self._locks: dict[int, threading.Lock] = {}
        self._lock = threading.Lock()

    def call(self, backend, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        with self._lock:
            if hasattr(backend, "_advance"):  # a LlamaCppBackend
                if id(backend) not in self.flows:
                    width = self.width or max(1, backend.n_seq_max - MAX_HEADS)
                    self.flows[id(backend)] = Flow(backend, width)
                flow = self.flows[id(backend)]
                return flow.generate(requests)
            lock = self._locks.setdefault(id(backend), threading.Lock())
        return _locked(lock, backend, requests)

    def close(self) -> None:
        for flow in self.flows.values():
            flow.close()


def _locked(lock: threading.Lock, backend, requests) -> Iterator[GenerationOutput]:
    with lock:
        yield from backend.generate(requests)
