"""One account of the process's memory: what every batch of every run and every kept model takes.

A batch reserves its KV caches and activations (`MemoryLedger.reserve`, a context manager)
before it allocates them and gives them back when it ends; loaded models and the caches they
keep between turns are held (`hold`) for as long as they stay. So MAJ's and RRMaj's batches in
flight together, several visitors' runs and the models kept loaded all count against one
budget. A reservation that does not fit waits for other runs to give memory back (at most
`wait_seconds`) or is refused with the numbers; one that could only fit once this run's own
batches end is refused at once (its run cannot give them back while it waits).

Estimates can be wrong, so a watchdog thread beside the ledger reads the process's resident
memory (`/proc/self/statm`) and, when it passes the budget anyway, revokes the reservations of
the run holding the most: that run's batches stop at their next decoding step with a message
that says why (`Reservation.check`).

`process_ledger()` is the process's one ledger, created on first use; `reset()` closes it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field

from rrdemo.errors import RRError, Stopped
from rrdemo.memory import MEMORY_ENV

_log = logging.getLogger(__name__)


def gb(size: float) -> str:
    """Bytes as "1.2 GB", or "35 MB" under a gigabyte (a small batch is not "0.0 GB")."""
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


def resident_memory() -> int:
    """The process's resident memory in bytes (`/proc/self/statm`; 0 where there is none)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE")


@dataclass
class Reservation:
    """Memory one batch of run `owner` holds while it runs."""

    owner: Hashable  # the run (a request group): the watchdog stops runs, not batches
    nbytes: int
    what: str
    revoked: str | None = field(default=None, compare=False)  # why the watchdog stopped it

    def check(self) -> None:
        """Raise `Stopped` with the watchdog's reason once this reservation was revoked."""
        if self.revoked is not None:
            raise Stopped(self.revoked)


class MemoryLedger:
    """Reservations and holds against a budget in bytes (`budget()`, read at each reservation;
    a reservation may give its own). `rss` reads the process's memory for the watchdog."""

    def __init__(
        self,
        budget: Callable[[], int] | int | None = None,
        *,
        wait_seconds: float = 30.0,
        rss: Callable[[], int] = resident_memory,
        interval: float = 0.5,
    ) -> None:
        self._budget = budget
        self.wait_seconds, self.rss, self.interval = wait_seconds, rss, interval
        self._reservations: list[Reservation] = []
        self._holds: dict[Hashable, tuple[int, str]] = {}
        self._changed = threading.Condition()
        self._last_budget: int | None = None
        self._watchdog: threading.Thread | None = None
        self._closed = threading.Event()
        self.stopped: list[str] = []  # what the watchdog said, newest last

    # -- what is taken ---------------------------------------------------------------------
    def budget(self) -> int | None:
        if callable(self._budget):
            return self._budget()
        return self._budget if self._budget is not None else self._last_budget

    def held(self) -> int:
        """Bytes reserved and held now."""
        with self._changed:
            return self._taken()

    def _taken(self) -> int:
        return sum(r.nbytes for r in self._reservations) + sum(n for n, _ in self._holds.values())

    def hold(self, key: Hashable, nbytes: int, what: str) -> None:
        """Count `nbytes` under `key` until `drop(key)` or the next `hold` of it (kept models,
        kept caches: memory that exists already, so it never waits)."""
        with self._changed:
            if nbytes > 0:
                self._holds[key] = (nbytes, what)
            else:
                self._holds.pop(key, None)
            self._changed.notify_all()

    def drop(self, key: Hashable) -> None:
        self.hold(key, 0, "")

    # -- reserving -------------------------------------------------------------------------
    @contextlib.contextmanager
    def reserve(
        self, owner: Hashable, nbytes: int, what: str, budget: int | None = None
    ) -> Iterator[Reservation]:
        """Hold `nbytes` for run `owner` while the block runs (what: "KV caches and activations
        of ..."); wait for other runs to give memory back, or RRError with the numbers."""
        reservation = Reservation(owner, nbytes, what)
        with self._changed:
            limit = budget if budget is not None else self.budget()
            if limit is not None:
                self._last_budget = limit
                self._admit(reservation, limit)
            self._reservations.append(reservation)
        self._start_watchdog()
        try:
            yield reservation
        finally:
            with self._changed:
                with contextlib.suppress(ValueError):
                    self._reservations.remove(reservation)
                self._changed.notify_all()

    def _admit(self, reservation: Reservation, limit: int) -> None:
        """Wait (holding `_changed`) until `reservation` fits under `limit`, or refuse it."""
        deadline = time.monotonic() + self.wait_seconds
        while self._taken() + reservation.nbytes > limit:
            own = sum(r.nbytes for r in self._reservations if r.owner == reservation.owner)
            others = self._taken() - own - sum(n for n, _ in self._holds.values())
            left = deadline - time.monotonic()
            if own or not others or left <= 0:  # waiting could not make it fit
                raise RRError(self._refusal(reservation, limit, waited=others > 0 and not own))
            self._changed.wait(min(left, 1.0))

    def _refusal(self, reservation: Reservation, limit: int, waited: bool) -> str:
        taken = self._taken()
        own = sum(r.nbytes for r in self._reservations if r.owner == reservation.owner)
        runs = len({r.owner for r in self._reservations} - {reservation.owner})
        after = f" after waiting {self.wait_seconds:.0f} s" if waited else ""
        return (
            f"this run needs {gb(reservation.nbytes)} more memory ({reservation.what}), but "
            f"{gb(taken)} of the {gb(limit)} limit ({MEMORY_ENV}) is taken{after}: "
            f"{gb(own)} by this run's other batches, {gb(taken - own)} by {runs} other run(s) "
            "and the models kept loaded; use fewer agents, a smaller M or L, or try again later"
        )

    # -- the watchdog ----------------------------------------------------------------------
    def _start_watchdog(self) -> None:
        with self._changed:
            if self._watchdog is not None or self._closed.is_set():
                return
            self._watchdog = threading.Thread(target=self._watch, name="rss-watchdog", daemon=True)
        self._watchdog.start()

    def _watch(self) -> None:
        while not self._closed.wait(self.interval):
            self.check_resident()

    def check_resident(self) -> str | None:
        """When the process's resident memory is over the budget, revoke every reservation of
        the run that holds the most, and return (and log) what was said; else None."""
        limit = self._last_budget if self._budget is None else self.budget()
        if limit is None:
            return None
        resident = self.rss()
        if resident <= limit:
            return None
        with self._changed:
            live = [r for r in self._reservations if r.revoked is None]
            if not live:
                return None
            totals: dict[Hashable, int] = {}
            for r in live:
                totals[r.owner] = totals.get(r.owner, 0) + r.nbytes
            largest = max(totals, key=lambda owner: totals[owner])
            message = (
                f"this run was stopped: the app's memory reached {gb(resident)}, over its limit "
                f"of {gb(limit)} ({MEMORY_ENV}), and this run held the most of it "
                f"({gb(totals[largest])} reserved)"
            )
            for r in live:
                if r.owner == largest:
                    r.revoked = message
            self.stopped.append(message)
        _log.warning("memory watchdog: %s", message)
        return message

    def forget_runs(self) -> int:
        """Drop every reservation and what the watchdog said, keeping the holds (the models that
        stay loaded); returns how many reservations were dropped (tests, between two tests)."""
        with self._changed:
            dropped = len(self._reservations)
            self._reservations.clear()
            self.stopped.clear()
            self._changed.notify_all()
        return dropped

    def close(self) -> None:
        """Stop the watchdog thread (reservations still work; nothing watches them)."""
        self._closed.set()
        thread = self._watchdog
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)


_PROCESS: MemoryLedger | None = None
_PROCESS_LOCK = threading.Lock()


def process_ledger() -> MemoryLedger:
    """The process's one ledger (created on first use; each reservation gives its budget)."""
    global _PROCESS
    with _PROCESS_LOCK:
        if _PROCESS is None:
            _PROCESS = MemoryLedger()
        return _PROCESS


def forget_runs() -> None:
    """The process ledger, if there is one, forgets its runs' reservations (`forget_runs`)."""
    with _PROCESS_LOCK:
        ledger = _PROCESS
    if ledger is not None:
        ledger.forget_runs()


def reset() -> None:
    """Close and forget the process's ledger (tests): the next use creates a fresh one."""
    global _PROCESS
    with _PROCESS_LOCK:
        ledger, _PROCESS = _PROCESS, None
    if ledger is not None:
        ledger.close()
