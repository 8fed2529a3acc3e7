"""One memory ledger for the process: batches of every run reserve before they allocate, a
reservation that does not fit waits for other runs or is refused with the numbers, and an RSS
watchdog stops the run holding the most when measured memory passes the budget anyway (the
third probe: MAJ's and RRMaj's batches in flight together grew 1.7x past the budget)."""

from __future__ import annotations

import threading
import time

import pytest

from bench.variants import twin
from rrdemo.backends.hf import TransformersBackend
from rrdemo.config import AgentSpec, RunConfig, Sampling
from rrdemo.errors import RRError, Stopped
from rrdemo.memory_ledger import MemoryLedger, resident_memory
from rrdemo.protocols import run_question
from rrdemo.tasks import get_task
from tests.support.fakes import FakePool

GB = 10**9


def test_reservations_of_several_runs_and_holds_count_against_one_budget() -> None:
    ledger = MemoryLedger(10 * GB, wait_seconds=0.2)
    ledger.hold("weights", 4 * GB, "a model's weights")
    with ledger.reserve("run-a", 3 * GB, "MAJ batch"), ledger.reserve("run-b", 2 * GB, "RR"):
        assert ledger.held() == 9 * GB
        # run-c waits for the others, then is refused
        with pytest.raises(RRError) as refused, ledger.reserve("run-c", 2 * GB, "8 sequences"):
            pass
    message = str(refused.value)
    assert "needs 2.0 GB more memory (8 sequences)" in message
    assert "9.0 GB of the 10.0 GB limit (RRDEMO_MAX_MEMORY_GB) is taken after waiting" in message
    assert ledger.held() == 4 * GB  # what the runs reserved came back


def test_a_batch_of_a_run_whose_other_batch_holds_memory_is_refused_at_once() -> None:
    """MAJ and RRMaj of one run interleaved: the second batch cannot wait for the first (the
    same thread drives both), so it is refused with the numbers straight away."""
    ledger = MemoryLedger(5 * GB, wait_seconds=30)
    started = time.monotonic()
    with (
        ledger.reserve("run", 3 * GB, "MAJ answers"),
        pytest.raises(RRError, match=r"3\.0 GB by this run's other batches"),
        ledger.reserve("run", 3 * GB, "RRMaj trajectories"),
    ):
        pass
    assert time.monotonic() - started < 5


def test_a_reservation_waits_for_another_run_to_give_memory_back() -> None:
    ledger = MemoryLedger(5 * GB, wait_seconds=60)
    taken, done = threading.Event(), threading.Event()

    def other_run() -> None:
        with ledger.reserve("other", 4 * GB, "another visitor's batch"):
            taken.set()
            time.sleep(0.3)

    thread = threading.Thread(target=other_run)
    thread.start()
    taken.wait(10)
    with ledger.reserve("mine", 3 * GB, "my batch"):
        done.set()
        assert ledger.held() == 3 * GB  # the other run had finished
    thread.join()


def test_the_watchdog_stops_the_run_that_holds_the_most() -> None:
    ledger = MemoryLedger(8 * GB, rss=lambda: 9 * GB)  # measured memory past the budget
    with (
        ledger.reserve("small", 1 * GB, "a") as small,
        ledger.reserve("large", 2 * GB, "b") as large,
        ledger.reserve("large", 2 * GB, "c") as also_large,
    ):
        message = ledger.check_resident()
        assert message is not None and "held the most of it (4.0 GB reserved)" in message
        assert "reached 9.0 GB, over its limit of 8.0 GB" in message
        small.check()  # the other run goes on
        for stopped in (large, also_large):
            with pytest.raises(Stopped, match="this run was stopped: the app's memory"):
                stopped.check()
    ledger.close()


def test_resident_memory_is_read_from_the_process() -> None:
    before = resident_memory()
    block = bytearray(200 * 2**20)
    block[::4096] = b"x" * len(block[::4096])  # touch every page
    assert resident_memory() - before > 150 * 2**20
    del block


def _source(real_pool, ledger: MemoryLedger, budget: int):
    backend = twin(real_pool.get("smollm2"), TransformersBackend)
    backend.ledger, backend.memory_budget = ledger, lambda: budget
    return backend, FakePool(backend)


CONFIG = RunConfig(
    agents=(AgentSpec("smollm2", True), AgentSpec("smollm2")), k=4, max_tokens=8, m=2,
    sampling=Sampling(temperature=0.0),
)  # fmt: skip


@pytest.mark.slow
def test_a_real_run_reserves_each_batch_and_gives_everything_back(real_pool) -> None:
    """Interleaved (the Arena's side by side), MAJ's batch is in flight while RRMaj's turns
    reserve theirs: the ledger sees both at once, and everything comes back at the end."""
    seen: list[tuple[int, int]] = []  # per reservation: bytes, and this run's bytes in flight

    class Recording(MemoryLedger):
        def reserve(self, owner, nbytes, what, budget=None):
            own = sum(r.nbytes for r in self._reservations if r.owner == owner)
            seen.append((nbytes, own))
            return super().reserve(owner, nbytes, what, budget)

    ledger = Recording(None)
    backend, source = _source(real_pool, ledger, 50 * GB)
    task = get_task("custom")
    question = task.question("Pick one: (A) yes (B) no", gold="(A)")
    events = list(run_question(CONFIG, question, task, source, interleave=True))
    assert any(e.kind == "decision" for e in events)
    assert len(seen) >= 3 and all(nbytes > 0 for nbytes, _ in seen)
    assert any(own > 0 for _, own in seen)  # a batch reserved while the run's other was live
    assert ledger.held() == 0  # every reservation and kept cache given back at the end


@pytest.mark.slow
def test_a_real_run_the_watchdog_revokes_stops_with_its_reason(real_pool) -> None:
    ledger = MemoryLedger(None, rss=lambda: 10**15, interval=0.05)  # always past the budget
    backend, source = _source(real_pool, ledger, 50 * GB)
    task = get_task("custom")
    question = task.question("Pick one: (A) yes (B) no", gold="(A)")
    config = RunConfig(agents=(AgentSpec("smollm2"),) * 2, k=4, max_tokens=64, m=2)
    with pytest.raises(Stopped, match="this run was stopped: the app's memory reached"):
        list(run_question(config, question, task, source, methods=("MAJ",)))
    assert ledger.stopped and ledger.held() == 0
    ledger.close()


def test_forgetting_runs_drops_their_reservations_and_keeps_the_models_held() -> None:
    """Between two tests (the suite's autouse reset): a run an earlier test left in flight no
    longer counts against the budget, a kept model still does, and a later release is harmless."""
    ledger = MemoryLedger(5 * GB, wait_seconds=0.1)
    ledger.hold("weights", 1 * GB, "a model's weights")
    left = ledger.reserve("abandoned run", 3 * GB, "MAJ answers")
    left.__enter__()
    ledger.stopped.append("an earlier note")
    assert ledger.forget_runs() == 1
    assert ledger.held() == 1 * GB and ledger.stopped == []
    with ledger.reserve("next run", 4 * GB, "RRMaj trajectories"):  # fits only once forgotten
        assert ledger.held() == 5 * GB
    left.__exit__(None, None, None)  # the abandoned run ends later: nothing to give back twice
    assert ledger.held() == 1 * GB


@pytest.mark.slow
def test_a_llama_cpp_context_is_held_while_loaded_and_counts_against_transformers_batches(
    real_pool,
) -> None:
    """llama.cpp allocates its KV cells (n_ctx x seqs), compute scratch and logits once, as its
    context is made; the pool holds what it reported in the process's ledger for as long as the
    model stays loaded. So a transformers batch that fits beside the transformers model alone is
    refused with the numbers while the llama.cpp model is loaded, and fits once it is unloaded."""
    import os

    from rrdemo.backends.base import Finished, GenerationRequest
    from rrdemo.backends.pool import ModelPool
    from rrdemo.memory_ledger import gb
    from tests.support.llama import llama

    llama(real_pool, "smollm2")  # skips without llama-cpp-python
    # the budget below is far under this process's memory: no watchdog, only the ledger's sums
    ledger = MemoryLedger(None, wait_seconds=0.1, rss=lambda: 0)
    pool = ModelPool(ledger=ledger, max_models=1)
    before = resident_memory()
    engine = pool.get("smollm2", None, "llamacpp")
    grew = resident_memory() - before
    cells = engine.n_ctx_seq * engine.n_seq_max
    kv = cells * real_pool.shape("smollm2").kv_bytes_per_token(2)  # float16 keys and values
    assert engine.context_bytes is not None and engine.context_bytes > kv  # and scratch, logits
    assert grew > kv  # made resident as the model loaded: llama.cpp clears its KV cells
    held = os.path.getsize(engine.path) + engine.context_bytes
    assert ledger.held() == held

    hf = twin(real_pool.get("smollm2"), TransformersBackend)
    weights = sum(p.numel() * p.element_size() for p in hf.model.parameters())
    ledger.hold(("weights", id(hf)), weights, "smollm2's weights")  # as the pool holds them
    request = GenerationRequest(
        ("hf", 0), "Pick one: (A) yes (B) no", 4, Sampling(temperature=0.0), 0, group="hf-run"
    )
    total, _, _ = hf.memory_need([hf.encode(request.prompt)], [request])
    budget = total + held // 2  # the batch fits beside its own model, not beside llama.cpp's too
    hf.ledger, hf.memory_budget = ledger, lambda: budget
    with pytest.raises(RRError) as refused:
        list(hf.generate([request]))
    taken = f"{gb(held + weights)} of the {gb(budget)} limit (RRDEMO_MAX_MEMORY_GB) is taken"
    assert taken in str(refused.value) and "and the models kept loaded" in str(refused.value)

    pool.release()  # unloaded: the ledger stops counting its context at once
    del engine
    assert ledger.held() == weights
    assert any(isinstance(o, Finished) for o in hf.generate([request]))
    hf.release()
    ledger.close()
