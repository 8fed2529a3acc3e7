"""Plurality vote over extracted answers, with a seeded tie-break. Pure functions."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


def derive_seed(seed: int, *parts: object) -> int:
    """A stable 63-bit seed for one random choice of a run, e.g. (seed, "RRMaj", qid, trajectory, turn)."""
    blob = repr((seed, *parts)).encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") >> 1


@dataclass(frozen=True)
class VoteResult:
    winner: str | None  # None when every answer abstained
    counts: dict[str, int]  # votes per answer, most votes first
    tied: tuple[str, ...]  # the answers that tied for the most votes, when more than one did
    abstained: int  # answers that could not be extracted


def plurality(answers: Sequence[str | None], tie_seed: int) -> VoteResult:
    """The most frequent non-None answer (the paper's "arithmetic mode").

    Tie rule: among the answers with the most votes, one is drawn uniformly at random with
    `random.Random(tie_seed)` from their sorted list, so a tie never favours an option by its
    position or by who answered first, and the same seed always breaks it the same way.
    """
    counts = Counter(a for a in answers if a is not None)
    abstained = sum(a is None for a in answers)
    if not counts:
        return VoteResult(None, {}, (), abstained)
    top = max(counts.values())
    tied = sorted(a for a, c in counts.items() if c == top)
    winner = tied[0] if len(tied) == 1 else random.Random(tie_seed).choice(tied)
    ordered = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return VoteResult(winner, ordered, tuple(tied) if len(tied) > 1 else (), abstained)
