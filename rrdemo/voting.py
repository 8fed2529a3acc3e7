"""Plurality vote over extracted answers, with a seeded tie-break. Pure functions."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Callable, Sequence
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


def grouped_keys(
    answers: Sequence[str | None],
    key: Callable[[str], str],
    same: Callable[[str, str], bool],
    anchors: Sequence[str] = (),
) -> list[str | None]:
    """The vote key of each answer (None for none), so that answers the scorer calls equal vote
    together even where their keys differ ("10\\%" and "10", "x=5" and "5" on MATH-500).

    Each answer joins the first group, in order, whose first answer has its key or is `same` as
    it; else it opens a group under its own key. `anchors` (the corruption target) open the first
    groups, so an answer equal to the target counts under the target's key.
    """
    groups: list[tuple[str, str]] = []  # (key, first answer) per group, in order
    keys: list[str | None] = []
    for answer in [*anchors, *answers]:
        if answer is None:
            keys.append(None)
            continue
        own = key(answer)
        found = next((k for k, a in groups if k == own or same(a, answer)), None)
        if found is None:
            groups.append((own, answer))
        keys.append(found or own)
    return keys[len(anchors) :]
