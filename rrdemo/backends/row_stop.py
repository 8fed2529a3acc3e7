"""When a row (one request being decoded) stops: the one rule every engine feeds.

A local engine decodes a row token by token and asks `row_stop` twice per token:

- when a token has been drawn, before it is written, with the writer's entropy over it
  (`RowState.entropy`; only the `uncertainty` turn policy reads it): "length" leaves that token to
  the next writer, so it is not written;
- when a token has been written (`entropy` None): "eos" when it was end-of-text, "length" when
  the row has its tokens, None while it goes on.

The rule, in that order:

1. End-of-text ends the row ("eos"; the token is not part of the text).
2. `hard_cap(k, room)` tokens end it, even inside a character: the engine then drops the
   unfinished character's bytes from the text (they still count as written). `room` is what is
   left of the trajectory's L, so no trajectory is ever longer than L.
3. `k` (`GenerationRequest.max_new_tokens`) tokens end it once the text ends on a whole
   character; until then up to `CHAR_TAIL` more tokens finish the character (a byte-level
   tokenizer spells one character with up to 4 one-byte tokens), within `room`.
4. A turn policy (rrdemo.turns) ends it earlier, never inside a character: `sentence` at a
   sentence end once K_min tokens are out, `uncertainty` before a token drawn with an entropy above
   the threshold once K_min tokens are out.

A served engine cannot stop the server's decoding at a character: it asks for `k` tokens
(`hard_cap(k, None)`), never more, and keeps what the server returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rrdemo.turns import TurnPolicy, turn_over

CHAR_TAIL = 3  # a UTF-8 character has at most 4 bytes: 3 more one-byte tokens finish it

Stop = Literal["eos", "length"]


@dataclass(frozen=True)
class RowState:
    """What a row's stop depends on, after `tokens` tokens of this turn were written."""

    tokens: int  # tokens written so far in this turn (a drawn token not yet written is not one)
    k: int  # the turn's length: K for an RR turn (fewer near L), L for a MAJ answer
    room: int | None = None  # hard cap: what is left of the trajectory's L; None: `k`
    eos: bool = False  # the token just written is end-of-text
    partial: bool = False  # the text written so far ends inside a character
    policy: TurnPolicy | None = None  # the run's turn policy; None: exactly `k` (the paper)
    text: str = ""  # the turn's text so far (the `sentence` policy reads it)
    # The writer's entropy (nats) over the token it has just drawn, asked before writing it;
    # None once the token is written (or when no policy reads it).
    entropy: float | None = None


def hard_cap(k: int, room: int | None) -> int:
    """The most tokens a row may write: `k`, plus up to `CHAR_TAIL` to finish a character, never
    more than `room` (None: no tokens past `k`)."""
    return min(max(room or 0, k), k + CHAR_TAIL)


def row_stop(state: RowState) -> Stop | None:
    """Why the row stops now ("eos", "length"), or None when it goes on (the module docstring)."""
    n, policy = state.tokens, state.policy
    if state.entropy is not None:  # a drawn token, not written yet: leave it to the next writer?
        return (
            "length"
            if policy is not None
            and policy.needs_entropy
            and not state.partial
            and policy.k_min <= n < state.k
            and turn_over(policy, n, state.text, state.entropy)
            else None
        )
    if state.eos:
        return "eos"
    if n >= hard_cap(state.k, state.room):
        return "length"
    if n >= state.k:
        return None if state.partial else "length"
    if policy is not None and policy.kind == "sentence" and not state.partial:
        return "length" if turn_over(policy, n, state.text) else None
    return None
