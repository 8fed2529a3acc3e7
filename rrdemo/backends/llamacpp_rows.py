"""The rows of one llama.cpp call: which sequence each request writes into and which cells it
starts from (its own, a copy of another key's, of a row still decoding in another call, or, in a
later prefill wave, of an earlier row of the same call); see rrdemo.backends.llamacpp."""

from __future__ import annotations

import time
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rrdemo.backends.base import GenerationRequest, ScoreRequest
from rrdemo.backends.llamacpp_native import N_UBATCH
from rrdemo.backends.llamacpp_sequences import Seq, Sequences
from rrdemo.backends.row_decoder import RowDecoder
from rrdemo.backends.tokens import common_prefix

# A cached donor holding at most this many tokens beyond what its copy took (a re-tokenized turn
# boundary) is dropped: the copy holds everything else it could give a later request.
_DOMINATED = 2
# A micro-batch costs about as much as this many prefill tokens: reading all the weights once.
# Padding a row's suffix by fewer tokens than that, to run it with longer ones, saves time.
PASS_TOKENS = 8
# The prefix-sharing group of the cached heads (agents' own prompts, computed alone and kept
# across runs; rrdemo.backends.llamacpp, "Heads"): every request may start from them.
HEADS = "\x00heads"
_MAX_LEVELS = 8  # distinct suffix lengths tried as padding targets (2^7 plans); beyond, no padding


@dataclass
class Row:
    """One request while it is being prefilled and decoded."""

    index: int
    request: GenerationRequest
    seq: Seq
    ids: list[int]  # prompt ids; generated tokens are fed after them
    cached: int  # prompt tokens whose cells are there (or copied) before this row's prefill
    rng: np.random.Generator
    wave: int = 0  # prefill wave: a row copying an earlier row's prefix runs after it
    source: Row | None = None  # that earlier row
    prefill_tokens: int = 0
    done: bool = False  # finished: its sequence belongs to the cache now
    entropy: float | None = None  # of the logits the next token was drawn from (uncertainty policy)
    decoder: RowDecoder = field(init=False)  # the tokens written, the text, the stop

    def __post_init__(self) -> None:
        self.decoder = RowDecoder(self.request)


def unique_keys(requests: Sequence[GenerationRequest | ScoreRequest]) -> set[Hashable]:
    """The keys of one call's requests, which must differ (each owns a sequence)."""
    keys = {r.key for r in requests}
    if len(keys) != len(requests):
        raise ValueError("two requests of one call share a key")
    return keys


def assign(
    seqs: Sequences,
    live: Iterable[Row],
    plans: list[tuple[GenerationRequest, list[int], Seq | None]],
    protect: set[Hashable],
    rows: list[Row],
    share_prefixes: bool = True,
) -> None:
    """Append a `Row` per plan (request, its ids, its own cached sequence or None) to `rows`: the
    rows get consecutive sequence ids (`Sequences.block`; a row whose own cells sit elsewhere moves
    them) and start from the longest prefix no compute is needed for."""
    now = time.monotonic()
    owned = [own.sid for _, _, own in plans if own is not None]
    block = seqs.block(owned, len(plans))
    spare = iter(sorted(set(block or ()) - set(owned)))
    dominated = []
    for index, (request, ids, own) in enumerate(plans):
        keep = min(common_prefix(own.ids, ids), len(ids) - 1) if own else 0
        in_place = own is not None and (block is None or own.sid in block)
        seq = own if in_place else seqs.take(next(spare)) if block else None
        seq = seq or seqs.new(protect)
        row = Row(index, request, seq, ids, keep, np.random.default_rng(request.seed))
        donor = donor_for(ids, keep, request.group, seqs, live, rows) if share_prefixes else None
        rows.append(row)
        if donor is None:
            if own is not None and not in_place:
                seqs.move(own, seq, keep)
            else:
                seqs.crop(seq.sid, keep)
        else:
            if own is not None and not in_place:
                seqs.give_back(own, kept=False)
            source, row.cached, key = donor
            if isinstance(source, Row):  # computed in this call: copy it once it is there
                row.source, row.wave = source, source.wave + 1
                seqs.clear(seq.sid)
            else:
                seqs.copy(source.sid, seq.sid, row.cached)
                dominated_donor = len(source.ids) - row.cached <= _DOMINATED
                if key is not None and source.group != HEADS and dominated_donor:
                    dominated.append(key)
        row.prefill_tokens = len(ids) - row.cached
        seq.used = now
    for key in dominated:  # this call's rows hold all they held: free their streams
        seqs.drop(key)


def donor_for(
    ids: list[int],
    keep: int,
    group: Hashable | None,
    seqs: Sequences,
    live: Iterable[Row],
    rows: list[Row],
) -> tuple[object, int, Hashable | None] | None:
    """What of the same prefix-sharing `group` (or the cached heads) shares the longest prefix with
    `ids`, if it beats `keep`: a cached sequence (with its key), a row of another call still
    decoding (its fed tokens: its cells stay put), or an earlier row of this call. With how many
    tokens to take."""
    best, key = None, None
    candidates = [(s, s.ids, k) for k, s in seqs.cached.items() if s.group in (group, HEADS)]
    candidates += [
        (r.seq, r.ids + r.decoder.fed, None)
        for r in live
        if not r.done and r.request.group == group
    ]
    candidates += [(r, r.ids, None) for r in rows if r.request.group == group]
    for source, source_ids, source_key in candidates:
        if not source_ids or source_ids[0] != ids[0]:
            continue
        n = min(common_prefix(source_ids, ids), len(ids) - 1, len(source_ids))
        if n > keep:
            best, keep, key = source, n, source_key
    return (best, keep, key) if best is not None else None


def micro_batches(lengths: list[int], sids: list[int]) -> int:
    """How many micro-batches llama.cpp cuts one call into when row i feeds `lengths[i]` tokens to
    sequence `sids[i]` (rows in batch order). With a stream per sequence it takes the same number
    of tokens from each of a run of consecutive sequence ids (`split_equal`, sequential): each
    micro-batch runs the first unfinished row and the next ones whose ids follow on, as far as the
    shortest of them or N_UBATCH tokens."""
    left, count = list(lengths), 0
    while any(left):
        run: list[int] = []
        for i, n in enumerate(left):
            if n and (not run or sids[i] == sids[run[-1]] + 1):
                run.append(i)
        take = min(min(left[i] for i in run), max(1, N_UBATCH // len(run)))
        for i in run:
            left[i] -= take
        count += 1
    return count


def padded_lengths(lengths: list[int], sids: list[int], room: list[int]) -> list[int]:
    """How many tokens each row feeds in one prefill call: its suffix, padded up to the length of
    a longer one where that saves micro-batches (each reads all the weights) worth more than the
    padding costs (`PASS_TOKENS` tokens a micro-batch). A row pads to at most `room` tokens."""
    distinct = sorted(set(lengths))
    optional = distinct[:-1] if len(distinct) <= _MAX_LEVELS else []
    best: tuple[tuple[int, int], list[int]] | None = None
    for mask in range(1 << len(optional)):
        levels = [n for j, n in enumerate(optional) if mask >> j & 1] + distinct[len(optional) :]
        padded = [
            level if (level := min(x for x in levels if x >= n)) <= r else n
            for n, r in zip(lengths, room, strict=True)
        ]
        cost = (PASS_TOKENS * micro_batches(padded, sids) + sum(padded), sum(padded))
        if best is None or cost < best[0]:
            best = (cost, padded)
    assert best is not None
    return best[1]
