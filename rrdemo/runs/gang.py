"""Several units at once: the model calls of worker threads merged into one batch.

A decoding step on a GPU costs about the same for 200 rows as for 5, so a sweep can run W units
in threads (`run_plan(..., workers=W)`). Every thread talks to the model through a `GangBackend`:
its `generate` call waits until each running thread has made one, then a single call of the real
backend continues all their requests together and each thread gets its own outputs back.

The units stay in step because every thread spends nearly all its time inside `generate` (MAJ's
answers, then RRMaj's turns). Each request keeps its own seed, so what a unit writes does not
depend on which units share its batch, up to the floating-point effects of batch shape
(`tests/rrdemo/backends/test_llamacpp_batching.py` measures how often they flip a token).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from rrdemo.backends.base import Backend, Delta, Finished, GenerationOutput, GenerationRequest

T = TypeVar("T")
_NONE = object()  # no item left


class _Call:
    """One thread's `generate` call while it waits for the gang."""

    def __init__(self, backend: Backend, requests: Sequence[GenerationRequest]) -> None:
        self.backend = backend
        self.requests = list(requests)
        self.outputs: list[GenerationOutput] = []
        self.error: BaseException | None = None
        self.ready = threading.Event()


class Gang:
    """Counts the threads at work and runs their waiting calls once all of them wait."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._members = 0
        self._waiting: list[_Call] = []
        self.batches = 0  # merged calls made (for tests and progress)

    def join(self) -> None:
        with self._lock:
            self._members += 1

    def leave(self) -> None:
        """A thread is done: the others may now be all that is left, and all waiting."""
        with self._lock:
            self._members -= 1
            calls = self._take_if_all_wait()
        self._run(calls)

    def call(self, backend: Backend, requests: Sequence[GenerationRequest]) -> list[Any]:
        """Wait for the gang, then return this call's outputs (raising what the model raised)."""
        mine = _Call(backend, requests)
        with self._lock:
            self._waiting.append(mine)
            calls = self._take_if_all_wait()
        self._run(calls)  # the last thread to arrive runs everyone's requests
        mine.ready.wait()
        if mine.error is not None:
            raise mine.error
        return mine.outputs

    def _take_if_all_wait(self) -> list[_Call]:
        if not self._waiting or len(self._waiting) < self._members:
            return []
        calls, self._waiting = self._waiting, []
        self.batches += 1
        return calls

    @staticmethod
    def _run(calls: list[_Call]) -> None:
        """One real `generate` per backend over the calls' requests, outputs handed back by index."""
        by_backend: dict[int, list[_Call]] = {}
        for call in calls:
            by_backend.setdefault(id(call.backend), []).append(call)
        for group in by_backend.values():
            owners: list[tuple[_Call, int]] = []  # merged index -> (call, its own index)
            requests: list[GenerationRequest] = []
            for call in group:
                owners += [(call, i) for i in range(len(call.requests))]
                requests += call.requests
            try:
                for output in group[0].backend.generate(requests):
                    call, own = owners[output.index]
                    call.outputs.append(_reindexed(output, own))
            except BaseException as error:  # every waiting thread sees the model's failure
                for call in group:
                    call.error = error
            for call in group:
                call.ready.set()


def _reindexed(output: GenerationOutput, index: int) -> GenerationOutput:
    if isinstance(output, Delta):
        return Delta(index, output.text)
    return Finished(
        index,
        output.text,
        output.n_tokens,
        output.finish_reason,
        output.prefill_tokens,
        output.decode_tokens,
    )


class GangBackend(Backend):
    """A backend whose `generate` goes through `gang` (anything with `call(backend, requests)`:
    a `Gang`, or `rrdemo.backends.llamacpp_flow.Flows`); everything else is the real backend's."""

    def __init__(self, inner: Backend, gang: Any) -> None:
        self._inner = inner
        self._gang = gang

    def __getattr__(self, name: str) -> Any:  # name, tokenizer, ...
        return getattr(self._inner, name)

    # Backend gives these class-level defaults, which __getattr__ would never override.
    revision = property(lambda self: self._inner.revision)
    max_context = property(lambda self: self._inner.max_context)
    loaded_from = property(lambda self: self._inner.loaded_from)

    def render_prompt(self, user: str, system: str | None = None) -> str:
        return self._inner.render_prompt(user, system)

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def release(self, key_prefix: tuple = ()) -> None:
        self._inner.release(key_prefix)

    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        yield from self._gang.call(self._inner, requests)


class GangModels:
    """A model source (`get(name, revision, backend=...)`) whose backends go through `gang`."""

    def __init__(self, models: Any, gang: Any) -> None:
        self._models = models
        self._gang = gang
        self._wrapped: dict[int, GangBackend] = {}
        self._lock = threading.Lock()

    def get(self, name: str, revision: str | None = None, **options: Any) -> Backend:
        inner = self._models.get(name, revision, **options)
        with self._lock:
            return self._wrapped.setdefault(id(inner), GangBackend(inner, self._gang))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._models, name)


def flowing(
    models: Any, items: Iterable[T], do: Callable[[T, Any], None], workers: int,
    width: int | None = None,
) -> None:  # fmt: skip
    """`do(item, source)` for every item, in `workers` threads that take the next item as they
    finish one; `source` is `models` whose llama.cpp backends run every thread's calls in one
    flow (`rrdemo.backends.llamacpp_flow`, at most `width` rows a step). The first error stops
    the threads taking more and is raised once they are done."""
    from rrdemo.backends.llamacpp_flow import Flows

    flows = Flows(width)
    source = GangModels(models, flows)
    queue, lock, errors = iter(items), threading.Lock(), []

    def work() -> None:
        while not errors:
            with lock:
                item = next(queue, _NONE)
            if item is _NONE:
                return
            try:
                do(item, source)
            except BaseException as error:
                errors.append(error)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(workers)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        flows.close()
    if errors:
        raise errors[0]
