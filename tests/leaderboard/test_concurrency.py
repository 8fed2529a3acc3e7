"""Concurrent submissions: 8 threads x 50 distinct files, plus repeats of the same files and a
set of files every thread submits at once. Each distinct submission must be stored exactly once,
nothing may be lost, and no "database is locked" error may reach a caller."""

from __future__ import annotations

import threading
from collections import Counter

from sqlalchemy import func, select

from leaderboard import service
from leaderboard.db import run_transaction
from leaderboard.orm import ResultRecord, SubmissionRecord
from tests.support.samples import encode, result_row, submission

THREADS = 8
PER_THREAD = 50
SHARED = 10  # files every thread submits (the same bytes, racing each other)


def _file(owner: str, i: int) -> bytes:
    rows = [
        result_row(
            dataset="gsm8k", maj_accuracy=round(i / 1000, 3), maj_ci=None, estimator="pool-draws"
        ),
        result_row(dataset="logic7", n_corrupted=4, n_honest=1, corrupted_agents=[0, 1, 2, 3]),
    ]
    return encode(submission(rows, submitter=owner, notes=f"{owner}'s file {i}"))


def test_eight_threads_store_each_distinct_file_exactly_once(factory) -> None:
    before = run_transaction(factory, lambda s: s.scalar(select(func.count(SubmissionRecord.id))))
    shared = [_file("shared", i) for i in range(SHARED)]
    errors: list[BaseException] = []
    outcomes: list[tuple[bytes, int, bool]] = []
    lock = threading.Lock()
    start = threading.Barrier(THREADS)

    def worker(t: int) -> None:
        mine = [_file(f"thread-{t}", i) for i in range(PER_THREAD)]
        # Own files, then the shared ones, then everything again (repeats are idempotent).
        plan = mine + shared + mine[::-1] + shared[::-1]
        start.wait()
        for raw in plan:
            try:
                outcome = run_transaction(factory, lambda s, raw=raw: service.submit(s, raw))
            except BaseException as error:  # any error reaching the caller fails the test
                with lock:
                    errors.append(error)
                continue
            with lock:
                outcomes.append((raw, outcome.submission_id, outcome.created))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    # Not timed (how fast the board stores is the machine's business): the wait only ends a
    # hang, and the counts below say whether every file was stored once.
    for thread in threads:
        thread.join(timeout=600)

    assert errors == []
    assert not any(thread.is_alive() for thread in threads)
    distinct = THREADS * PER_THREAD + SHARED
    assert len(outcomes) == THREADS * 2 * (PER_THREAD + SHARED)
    # Every distinct file got one id, created exactly once; all repeats got the same id.
    ids_per_file: dict[bytes, set[int]] = {}
    for raw, sub_id, _ in outcomes:
        ids_per_file.setdefault(raw, set()).add(sub_id)
    assert len(ids_per_file) == distinct
    assert all(len(ids) == 1 for ids in ids_per_file.values())
    created = Counter(raw for raw, _, was_created in outcomes if was_created)
    assert len(created) == distinct and set(created.values()) == {1}

    after = run_transaction(factory, lambda s: s.scalar(select(func.count(SubmissionRecord.id))))
    assert after - before == distinct
    new_rows = run_transaction(
        factory,
        lambda s: s.scalar(
            select(func.count(ResultRecord.id))
            .join(SubmissionRecord)
            .where(SubmissionRecord.source == "local_run")
        ),
    )
    assert new_rows == 2 * distinct  # nothing lost, no partial submission
