"""The KV sequences of one llama.cpp context: which request key caches which sequence id.

Each sequence id owns its own KV stream. A key's sequence stays cached after its request ends
(the next turn reuses its prefix); a sequence is busy while a row decodes into it, and the least
recently used idle one is evicted when a new request needs an id and none is free.

The rows of one call get consecutive sequence ids (`block`): llama.cpp runs a batch over separate
streams as one micro-batch only while its sequence ids go up one by one, and cuts it into several
otherwise, each of which reads all the weights again (5 rows cost ~1.7x more on 2 CPU cores).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from rrdemo.backends.base import keys_with_prefix
from rrdemo.errors import RRError


@dataclass
class Seq:
    """A sequence id of the KV cache and the token ids its cells hold (positions 0..len-1)."""

    sid: int
    ids: list[int]
    used: float = 0.0  # last use, for eviction
    group: Hashable | None = None  # the prefix-sharing group of the request that filled it


class Sequences:
    """The sequence ids of a context with `n_seq_max` streams (llama.cpp's memory calls on `mem`)."""

    def __init__(self, ll, mem, n_seq_max: int, name: str) -> None:
        self._ll = ll
        self._mem = mem
        self.n_seq_max = n_seq_max
        self.name = name
        self.cached: dict[Hashable, Seq] = {}  # request key -> the sequence holding its cells
        self.free = list(range(n_seq_max))
        self.busy: set[int] = set()  # sequence ids of rows being decoded (never evicted)

    def release(self, key_prefix: tuple = ()) -> None:
        """Forget the cached keys starting with `key_prefix` (all when empty)."""
        for key in keys_with_prefix(list(self.cached), key_prefix):
            self._drop(key)

    def _drop(self, key: Hashable) -> None:
        seq = self.cached.pop(key)
        self.clear(seq.sid)
        self.free.append(seq.sid)

    def _evict_one(self, protect: set[Hashable]) -> bool:
        """Drop the least recently used cached key that no live row needs; False if none."""
        idle = [
            (s.used, k)
            for k, s in self.cached.items()
            if k not in protect and s.sid not in self.busy
        ]
        if not idle:
            return False
        self._drop(min(idle, key=lambda x: x[0])[1])
        return True

    def new(self, protect: set[Hashable]) -> Seq:
        """The lowest free sequence (evicting an idle key not in `protect` when none is free)."""
        if not self.free and not self._evict_one(protect):
            raise RRError(f"{self.name}: more than {self.n_seq_max} requests at once; lower N or M")
        return self.take(min(self.free))

    def take(self, sid: int) -> Seq:
        """Free sequence `sid`, busy now."""
        self.free.remove(sid)
        self.busy.add(sid)
        return Seq(sid, [])

    def block(self, owned: list[int], n: int) -> list[int] | None:
        """`n` consecutive sequence ids, each free or in `owned` (the call's own sequences), the
        run holding most of `owned` (fewest copies); None when there is none. Never evicts: a
        cache another run still needs is worth more than one micro-batch (an evicted prefix is
        computed again in other pieces, which can flip a near-tie)."""
        usable = set(owned) | set(self.free)
        runs = [
            range(start, start + n)
            for start in range(self.n_seq_max - n + 1)
            if all(sid in usable for sid in range(start, start + n))
        ]
        if not runs:
            return None
        mine = set(owned)
        return list(max(runs, key=lambda run: (len(mine.intersection(run)), -run.start)))

    def drop(self, key: Hashable) -> None:
        """Forget an idle cached key now (its cells are no longer worth keeping)."""
        if key in self.cached and self.cached[key].sid not in self.busy:
            self._drop(key)

    def keep(self, key: Hashable, seq: Seq) -> None:
        """A finished row's sequence stays cached under its key."""
        self.cached[key] = seq
        self.busy.discard(seq.sid)

    def give_back(self, seq: Seq, kept: bool) -> None:
        """A row is over: its sequence is no longer busy, and freed unless it was `kept`."""
        self.busy.discard(seq.sid)
        if not kept:
            self.clear(seq.sid)
            self.free.append(seq.sid)

    def move(self, seq: Seq, target: Seq, keep: int) -> None:
        """`target` takes the first `keep` cells of `seq`, whose id is freed."""
        if keep:
            self.copy(seq.sid, target.sid, keep)
        else:
            self.clear(target.sid)
        self.give_back(seq, kept=False)

    def clear(self, sid: int) -> None:
        self._ll.llama_memory_seq_rm(self._mem, sid, -1, -1)

    def crop(self, sid: int, keep: int) -> None:
        """Keep the first `keep` cells of sequence `sid`."""
        self._ll.llama_memory_seq_rm(self._mem, sid, keep, -1)

    def copy(self, source: int, target: int, n: int) -> None:
        """Make sequence `target` hold the first `n` cells of sequence `source`."""
        self.clear(target)
        self._ll.llama_memory_seq_cp(self._mem, source, target, -1, -1)  # whole stream only
        self.crop(target, n)
