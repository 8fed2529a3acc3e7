"""One row's decoding step, shared by the local engines (transformers and llama.cpp).

A row is one request being decoded. Its engine keeps the prefill, the model's steps and the
logits; for every token it draws it hands the row's `RowDecoder` the token, the bytes it adds to
the text and the writer's entropy over it (`entropy_of`, read only by the `uncertainty` turn
policy). The decoder answers with the text the token completes and whether the row stops, and at
the end gives the row's `Finished`. Its bytes pass through one incremental UTF-8 decoder, so a
delta never holds half a character and the deltas of a row add up to its text.

When a row stops (`row_stop`; the one statement of this rule, which other modules point to):

1. Before a drawn token is written, a turn policy may leave it to the next writer ("length"; the
   `uncertainty` policy, when the writer's entropy over it passes the threshold once K_min tokens
   are out, never inside a character): the token is not written.
2. End-of-text ends the row ("eos"; the token is not part of the text).
3. `hard_cap(k, room)` tokens end it ("length"), even inside a character: the bytes of that
   unfinished character are dropped from the text (they still count as written). `room` is what
   is left of the trajectory's L, so no trajectory is ever longer than L.
4. `k` (`GenerationRequest.max_new_tokens`: K for an RR turn, L for a MAJ answer) tokens end it
   once the text ends on a whole character; until then up to `CHAR_TAIL` more tokens finish the
   character the K-th token started (a byte-level tokenizer spells one character with up to 4
   one-byte tokens), within `room`.
5. The `sentence` turn policy ends it earlier, at a sentence end once K_min tokens are out, never
   inside a character.

A served engine cannot stop the server's decoding at a character: it asks for `k` tokens
(`hard_cap(k, None)`), never more, and keeps what the server returns.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from typing import Literal

from rrdemo.backends.base import Finished, GenerationRequest
from rrdemo.turns import TurnPolicy, entropy_nats, turn_over

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


class RowDecoder:
    """One row's tokens in, its text and its stop out (the module docstring)."""

    def __init__(self, request: GenerationRequest) -> None:
        self.request = request
        self.tokens: list[int] = []  # the tokens written, an end-of-text token included
        self.text = ""  # the whole characters written so far
        self.stop: Stop | None = None
        self.left = False  # the last drawn token was left to the next writer, not written
        self._utf8 = codecs.getincrementaldecoder("utf-8")("replace")

    @property
    def partial(self) -> bool:
        """Whether the bytes written so far end inside a character."""
        return bool(self._utf8.getstate()[0])

    @property
    def fed(self) -> list[int]:
        """The tokens the model has read: all written ones but the last, which no step fed, unless
        the row ended before writing a drawn token (`left`)."""
        return self.tokens if self.left else self.tokens[:-1]

    def entropy_of(self, logits) -> float | None:
        """The writer's entropy over the logits a token is drawn from, when its policy reads it."""
        policy = self.request.turn
        return entropy_nats(logits) if policy is not None and policy.needs_entropy else None

    def step(self, token: int, data: bytes, eos: bool, entropy: float | None = None) -> str:
        """Write the drawn `token`, which adds the bytes `data` (`eos`: it is end-of-text, which
        adds none): returns the text it completes ("" inside a character) and sets `stop`. A token
        the turn policy leaves to the next writer (its `entropy`) is not written."""
        if entropy is not None and row_stop(self._state(entropy=entropy)) is not None:
            self.stop, self.left = "length", True
            return ""
        self.tokens.append(token)
        delta = "" if eos else self._utf8.decode(data)
        self.text += delta
        self.stop = row_stop(self._state(eos=eos))
        return delta

    def finished(self, index: int, prefill_tokens: int) -> Finished:
        """The row's output once it stopped: its text (without the bytes of a character the cap
        cut) and its tokens (an end-of-text token is decoded, not part of the text)."""
        return Finished(
            index=index,
            text=self.text,
            n_tokens=len(self.tokens) - (self.stop == "eos"),
            finish_reason=self.stop or "length",
            prefill_tokens=prefill_tokens,
            decode_tokens=len(self.tokens),
        )

    def _state(self, eos: bool = False, entropy: float | None = None) -> RowState:
        request = self.request
        return RowState(
            len(self.tokens),
            request.max_new_tokens,
            request.room,
            eos,
            self.partial,
            request.turn,
            self.text,
            entropy,
        )
