"""The truth meter's reads on llama.cpp (`Backend.score`, rrdemo.meter): a mixin of
`LlamaCppBackend` that prefills each reader's prompt + text + cue like a generation request and
reads the candidates' log-probabilities off the logits, then crops the cue away again."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from rrdemo.backends.base import GenerationRequest, ScoreRequest, continuation_ids
from rrdemo.backends.llamacpp_native import N_BATCH
from rrdemo.backends.llamacpp_rows import Row, unique_keys
from rrdemo.config import Sampling


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits.astype(np.float64) - logits.max()
    return shifted - np.log(np.exp(shifted).sum())


class Scoring:
    """`score` and its helpers; the engine's sequences, prefill and decode come from the class
    it is mixed into (rrdemo.backends.llamacpp)."""

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[float, ...]]:
        """Prompt + cue is prefilled like a generation request's (its own cached cells or a copy
        of a longer-sharing sequence; only the rest runs) and stays cached under the key (the
        next, longer prompt keeps all but the cue). The tokens the candidates share run once on
        top, then each candidate's own tokens but its last, one candidate at a time for all rows,
        and are cropped away again: a candidate's last token is read off the logits before it."""
        protect, rows = unique_keys(requests), []
        if not requests:
            return []
        tokenize = lambda text: self._vocab.tokenize(text, add_special=False)  # noqa: E731
        tails = []
        for r in requests:
            cue = tokenize(r.cue)
            tails.append([continuation_ids(tokenize, r.cue, cue, c) for c in r.candidates])
        greedy = Sampling(temperature=0.0)
        reads = [
            GenerationRequest(r.key, r.prompt + r.cue, max(map(len, t)), greedy, 0, group=r.group)
            for r, t in zip(requests, tails, strict=True)
        ]
        try:
            with self._lock:
                self._check_open()
                self._setup(reads, protect, rows)
                after_cue = self._prefill(rows, read=lambda row, logits: _log_softmax(logits))
                scores = self._candidates(rows, tails, after_cue)
                for row in rows:
                    row.seq.ids, row.seq.used = row.ids, time.monotonic()
                    row.seq.group, row.done = row.request.group, True
                    self._seqs.keep(row.request.key, row.seq)
        finally:
            with self._lock:
                for row in rows:
                    self._seqs.give_back(row.seq, kept=row.done)
        return scores

    def _candidates(
        self, rows: list[Row], tails: list[list[list[int]]], after_cue: list[np.ndarray]
    ) -> list[tuple[float, ...]]:
        """Each row's candidates' summed log-probabilities, given the log-probabilities after
        its cue: feed the shared tokens once, then each candidate's own (but its last)."""
        common = []
        for t in tails:
            n = min(len(c) for c in t) - 1  # every candidate's last token stays unfed
            while n and any(c[:n] != t[0][:n] for c in t):
                n -= 1
            common.append(t[0][:n])
        shared = self._feed(rows, common, [len(row.ids) for row in rows])
        scores = []
        for b in range(len(rows)):
            logps = [after_cue[b], *shared[b]]
            scores.append(
                [sum(logps[p][c[p]] for p in range(len(common[b]) + 1)) for c in tails[b]]
            )
        for k in range(max(len(t) for t in tails)):
            own = [t[k][len(common[b]) : -1] if k < len(t) else [] for b, t in enumerate(tails)]
            start = [len(row.ids) + len(common[b]) for b, row in enumerate(rows)]
            fed = self._feed(rows, own, start)
            for b, t in enumerate(tails):
                if k < len(t):
                    c, n = t[k], len(common[b])
                    scores[b][k] += sum(fed[b][p][c[n + 1 + p]] for p in range(len(own[b])))
        for row in rows:
            self._seqs.crop(row.seq.sid, len(row.ids))
        return [tuple(float(x) for x in s) for s in scores]

    def _feed(self, rows: list[Row], tokens: list[list[int]], start: list[int]) -> list[list]:
        """Run `tokens[b]` into row b's sequence from position `start[b]` (cropping what lay
        there), all rows in one call; the log-probabilities after each fed token, per row."""
        entries, at = [], []
        for b in sorted(range(len(rows)), key=lambda b: rows[b].seq.sid):
            self._seqs.crop(rows[b].seq.sid, start[b])
            for p, token in enumerate(tokens[b]):
                at.append((b, p))
                entries.append((token, start[b] + p, rows[b].seq.sid, True))
        out: list[list] = [[None] * len(t) for t in tokens]
        for first in range(0, len(entries), N_BATCH):
            self._decode(entries[first : first + N_BATCH])
            for i in range(first, min(first + N_BATCH, len(entries))):
                b, p = at[i]
                out[b][p] = _log_softmax(self._logits(i - first))
        return out
