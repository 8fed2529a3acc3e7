"""The rows of one llama.cpp call, without a model: which cells each request starts from (its own,
a cached donor's, a row still decoding, an earlier row of the call) and the padded prefill plan."""

from __future__ import annotations

import numpy as np

from rrdemo.backends.base import GenerationRequest
from rrdemo.backends.llamacpp_rows import (
    PASS_TOKENS,
    Row,
    assign,
    donor_for,
    micro_batches,
    padded_lengths,
)
from rrdemo.backends.llamacpp_sequences import Seq
from rrdemo.config import Sampling
from tests.support.llama import sequences


def _request(key, group=None) -> GenerationRequest:
    return GenerationRequest(key, "", 4, Sampling(), 0, group=group)


def _assign(seqs, plans, share_prefixes=True, live=()) -> list[Row]:
    rows: list[Row] = []
    assign(seqs, live, plans, set(), rows, share_prefixes)
    return rows


# -- where each row starts ------------------------------------------------------------------------
def test_a_later_row_of_the_call_starts_from_an_earlier_rows_prefix():
    seqs = sequences(4)
    first, second = [1, 2, 3, 4, 5], [1, 2, 3, 9, 9, 9]
    rows = _assign(seqs, [(_request("a"), first, None), (_request("b"), second, None)])
    assert [r.seq.sid for r in rows] == [0, 1]  # consecutive ids: one micro-batch
    assert rows[1].source is rows[0] and rows[1].wave == rows[0].wave + 1
    assert rows[1].cached == 3  # the common prefix of the two prompts
    assert [r.prefill_tokens for r in rows] == [len(first), len(second) - 3]


def test_without_sharing_or_across_groups_every_row_prefills_its_whole_prompt():
    ids = [[1, 2, 3, 4], [1, 2, 3, 5]]
    alone = _assign(sequences(4), [(_request(i), x, None) for i, x in enumerate(ids)], False)
    apart = _assign(sequences(4), [(_request(i, group=i), x, None) for i, x in enumerate(ids)])
    for rows in (alone, apart):
        assert [r.cached for r in rows] == [0, 0] and [r.source for r in rows] == [None, None]
        assert [r.prefill_tokens for r in rows] == [4, 4]


def test_a_cached_donor_is_copied_and_dropped_when_the_copy_holds_all_it_had():
    seqs = sequences(4, {2: 1.0})
    seqs.cached[("key", 2)].ids = [1, 2, 3, 4]
    (row,) = _assign(seqs, [(_request("new"), [1, 2, 3, 4, 7, 8], None)])
    assert (row.cached, row.prefill_tokens) == (4, 2)
    assert ("cp", 2, row.seq.sid) in seqs._ll.calls
    assert ("key", 2) not in seqs.cached and 2 in seqs.free  # nothing left worth keeping


def test_a_donor_holding_more_than_the_copy_took_stays_cached():
    seqs = sequences(4, {2: 1.0})
    seqs.cached[("key", 2)].ids = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    (row,) = _assign(seqs, [(_request("new"), [1, 2, 3, 4, 7, 8], None)])
    assert row.cached == 4 and ("key", 2) in seqs.cached


def test_a_row_keeps_its_own_cells_in_place_and_prefills_only_the_new_suffix():
    seqs = sequences(4, {1: 1.0})
    own = seqs.cached.pop(("key", 1))
    seqs.busy.add(own.sid)
    own.ids = [1, 2, 3, 4, 5]
    (row,) = _assign(seqs, [(_request(("key", 1)), [1, 2, 3, 4, 5, 6, 7], own)])
    assert row.seq is own and (row.cached, row.prefill_tokens) == (5, 2)
    assert seqs._ll.calls == [("rm", own.sid, 5)]  # cropped to what it keeps, nothing copied


# -- donors ---------------------------------------------------------------------------------------
def test_the_donor_never_covers_the_whole_prompt():
    """The last prompt token is always computed: its logits draw the first new token."""
    seqs = sequences(4, {0: 1.0})
    seqs.cached[("key", 0)].ids = [1, 2, 3]
    source, n, key = donor_for([1, 2, 3], 0, None, seqs, [], [])
    assert (source.sid, n, key) == (0, 2, ("key", 0))
    assert donor_for([1, 2, 3], 2, None, seqs, [], []) is None  # no better than what it has


def test_a_row_still_decoding_in_another_call_gives_what_it_has_fed():
    other = Row(0, _request("other"), Seq(3, []), [1, 2, 3], 0, np.random.default_rng(0))
    other.decoder.tokens.extend([4, 5, 6])  # the last one is written but not fed yet
    found = donor_for([1, 2, 3, 4, 5, 6, 7], 0, None, sequences(4), [other], [])
    assert found == (other.seq, 5, None)
    other.done = True  # finished: its sequence belongs to the cache now
    assert donor_for([1, 2, 3, 4, 5, 6, 7], 0, None, sequences(4), [other], []) is None


def test_the_longest_shared_prefix_of_the_same_group_wins():
    seqs = sequences(4, {0: 1.0, 1: 2.0})
    seqs.cached[("key", 0)].ids = [1, 2, 9]
    seqs.cached[("key", 1)].ids = [1, 2, 3, 4, 9]
    assert donor_for([1, 2, 3, 4, 5], 0, None, seqs, [], [])[1:] == (4, ("key", 1))
    seqs.cached[("key", 1)].group = "another run"
    assert donor_for([1, 2, 3, 4, 5], 0, None, seqs, [], [])[1:] == (2, ("key", 0))


# -- the prefill plan -----------------------------------------------------------------------------
def test_micro_batches_follow_llama_cpp_s_equal_split_over_consecutive_ids():
    assert micro_batches([16, 16, 16], [3, 4, 5]) == 1
    assert micro_batches([16, 32, 16], [0, 1, 2]) == 2  # 3 x 16, then row 1's last 16
    assert micro_batches([16, 16], [0, 2]) == 2  # ids not consecutive
    assert micro_batches([17, 33, 17, 49, 33], [0, 1, 2, 3, 4]) == 4  # row 1 alone: 3 is not 2
    assert micro_batches([600], [0]) == 2  # N_UBATCH = 512 tokens a micro-batch


def test_a_suffix_is_padded_only_where_that_saves_a_micro_batch():
    lengths, sids, room = [17, 18, 17, 16, 33], [0, 1, 2, 3, 4], [999] * 5
    assert padded_lengths(lengths, sids, room) == [18, 18, 18, 18, 33]  # 4 pad tokens, 2 passes
    far = [2, 2 + 4 * PASS_TOKENS]  # padding costs more than the pass it saves
    assert padded_lengths(far, [0, 1], [999, 999]) == far
    assert padded_lengths([17, 18], [0, 1], [17, 999]) == [17, 18]  # no room in row 0's stream
    assert padded_lengths([5], [0], [999]) == [5]
