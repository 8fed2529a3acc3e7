"""Turn policies: when an RR writer hands the shared text to the next agent (adaptive K).

The paper's RR gives every writer exactly K tokens per turn; adapting K is its second open
question. A `TurnPolicy` answers, after each token a writer adds, "is this turn over?"
(`turn_over`), and every local backend asks it per row of a batch (docs/turns.md):

- ``fixed``: over at K tokens (the paper's rule, and the default).
- ``sentence``: over at the first sentence or line end once at least K_min tokens were written,
  and at K_max (= K) tokens at the latest. A sentence end is the turn's text ending in ``.``,
  ``!`` or ``?`` (closing quotes or brackets may follow) where the ``.`` does not follow a digit
  ("3." may open "3.14"), or a newline; trailing spaces and tabs are ignored.
- ``uncertainty``: over when the writer's next-token entropy (nats, of the softmax of the logits
  its next token is drawn from, before temperature and top-p) passes the threshold, once at least
  K_min tokens were written, and at K_max at the latest: the uncertain token is left to the next
  writer, so an honest agent is brought in where a corrupted one wavers.

A turn still never ends inside a character (the K-th-token rule, `rrdemo.backends.row_decoder`);
cost accounting is unchanged: every trajectory decodes at most L tokens.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from rrdemo.errors import RRError

TurnKind = Literal["fixed", "sentence", "uncertainty"]
TURN_POLICIES: tuple[str, ...] = ("fixed", "sentence", "uncertainty")
DEFAULT_ENTROPY_THRESHOLD = 2.0  # nats; docs/turns.md has the measurement behind it

_SENTENCE_END = re.compile(r"((?<!\d)\.|[!?])[\"')\]\u201d\u2019]*[ \t]*$|\n[ \t]*$")


def default_k_min(k: int) -> int:
    """K_min when none is given: a quarter of K, at least one token."""
    return max(1, k // 4)


@dataclass(frozen=True)
class TurnPolicy:
    """How long an RR turn is: `kind`, at least `k_min` and at most `k_max` (= K) tokens."""

    kind: TurnKind = "fixed"
    k_min: int = 1
    k_max: int = 100
    entropy_threshold: float = DEFAULT_ENTROPY_THRESHOLD

    def __post_init__(self) -> None:
        validate_turn_settings(self.k_min, self.k_max, self.entropy_threshold)

    @property
    def adaptive(self) -> bool:
        """True unless every turn is exactly K tokens (the paper's rule)."""
        return self.kind != "fixed"

    @property
    def needs_entropy(self) -> bool:
        return self.kind == "uncertainty"

    @property
    def shortest(self) -> int:
        """The fewest tokens a turn that does not end its trajectory can have."""
        return self.k_min if self.adaptive else self.k_max


def validate_turn_settings(k_min: int | None, k: int, threshold: float) -> None:
    """RRError naming what is wrong and what is allowed, for the turn lengths of a run (the
    policy's name is one of `TURN_POLICIES`, checked with the other run settings)."""
    if k_min is not None and not 1 <= k_min <= k:
        raise RRError(f"K_min (fewest tokens per turn) must be between 1 and K ({k}), got {k_min}")
    if not (isinstance(threshold, int | float) and math.isfinite(threshold) and threshold > 0):
        raise RRError(f"the entropy threshold must be a positive number of nats, got {threshold!r}")


def is_sentence_end(text: str) -> bool:
    """Whether `text` ends a sentence or a line (the `sentence` policy's rule, module docstring)."""
    return bool(_SENTENCE_END.search(text))


def turn_over(
    policy: TurnPolicy, tokens_in_turn: int, text_so_far: str, entropy: float | None = None
) -> bool:
    """Whether the writer's turn is over after its `tokens_in_turn`-th token.

    `text_so_far` is the turn's decoded text; `entropy` is the writer's entropy (nats) over the
    token it would write next (only the `uncertainty` policy reads it; None: not known)."""
    if tokens_in_turn >= policy.k_max:
        return True
    if policy.kind == "fixed" or tokens_in_turn < policy.k_min:
        return False
    if policy.kind == "sentence":
        return is_sentence_end(text_so_far)
    return entropy is not None and entropy > policy.entropy_threshold


def entropy_nats(logits) -> float:
    """Entropy (nats) of softmax(`logits`), for a 1-D numpy array or torch tensor of logits."""
    import numpy as np  # kept out of module import time

    z = np.asarray(
        logits.float().cpu().numpy() if hasattr(logits, "float") else logits, dtype=np.float64
    )
    z = z[np.isfinite(z)]
    if z.size == 0:
        return 0.0
    z = z - z.max()
    p = np.exp(z)
    total = p.sum()
    return float(math.log(total) - (p * z).sum() / total)
