"""The tiny interface every model backend implements, and the outputs it streams.

A backend continues text. The protocols hand it `GenerationRequest`s (the full text an agent
sees, how many tokens to add, how to sample) and read back a stream of `Delta`s (text as it is
decoded) and one `Finished` per request. A backend may keep per-`key` state between calls (the
transformers backend keeps each agent's KV cache there); `release()` drops it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from rrdemo.backends.registry import thinking_for
from rrdemo.config import Sampling
from rrdemo.errors import RRError
from rrdemo.turns import TurnPolicy


@dataclass(frozen=True)
class GenerationRequest:
    key: Hashable  # whose state this is, e.g. ("RRMaj", run_id, trajectory, agent); reused across turns
    prompt: str  # everything the agent reads: its rendered prompt followed by the shared text
    max_new_tokens: int  # K for an RR turn, L for a MAJ answer (fewer only at the end)
    sampling: Sampling
    seed: int  # seeds this request's own random generator: results do not depend on batching
    # Hard cap on new tokens (RR passes what is left of the trajectory's L): a backend may run a
    # few tokens past `max_new_tokens`, within it, by the K-th-token rule
    # (`rrdemo.backends.row_decoder`). None: never past `max_new_tokens`.
    room: int | None = None
    # RR turn policy (rrdemo.turns): a backend may end the turn before `max_new_tokens` (= K_max)
    # when the policy says so, per row. None: exactly `max_new_tokens` (the fixed rule; MAJ).
    turn: TurnPolicy | None = None
    # Prefix sharing scope: a request starts from cells of requests of the same group only (the
    # protocols pass their run id), so a run's text never depends on what other runs that happen
    # to be going on at the same time (other Arena visitors) have cached. None: one shared group.
    group: Hashable | None = None
    # How many leading characters of `prompt` are the agent's own rendered prompt (question,
    # instructions, injection), the same in every run that asks it. A backend may keep those
    # cells across runs (llama.cpp does: `rrdemo.backends.llamacpp`, "Heads"); 0: none.
    head: int = 0


@dataclass(frozen=True)
class Delta:
    """Newly decoded text of request `index` (held back while it would end in half a character)."""

    index: int
    text: str


@dataclass(frozen=True)
class Finished:
    """Request `index` is done: `text` holds its `n_tokens` new tokens (end-of-sequence excluded).

    `text` never ends inside a character (the K-th-token rule, `rrdemo.backends.row_decoder`)."""

    index: int
    text: str
    n_tokens: int
    finish_reason: Literal["eos", "length"]
    prefill_tokens: int  # prompt tokens this request had to run through the model (cache misses)
    decode_tokens: int  # sequential decoding steps this request took


GenerationOutput = Delta | Finished


@dataclass(frozen=True)
class ScoreRequest:
    """How likely a reader finds each candidate continuation after `prompt` + `cue` (the meter).

    Like a generation request, `key` names the reader's cached state: a backend keeps the cells of
    `prompt` under it, so the next reading of a longer text runs only the new tokens; the cue and
    the candidates never stay in the cache."""

    key: Hashable
    prompt: str  # what the reader reads: its rendered prompt followed by the shared text
    cue: str  # read after the prompt before every candidate, e.g. "\nThe answer is"
    candidates: tuple[str, ...]  # continuations scored, e.g. (" (B).", " (C).")
    group: Hashable | None = None  # prefix-sharing scope, as in GenerationRequest


def continuation_ids(tokenize, cue: str, cue_ids: list[int], candidate: str) -> list[int]:
    """The token ids of `candidate` read after `cue`: the joint tokenization's tail when it keeps
    the cue's own tokens, else the candidate tokenized alone."""
    joint = tokenize(cue + candidate)
    if joint[: len(cue_ids)] == cue_ids and len(joint) > len(cue_ids):
        return joint[len(cue_ids) :]
    return tokenize(candidate)


def keys_with_prefix(keys: Iterable[Hashable], key_prefix: tuple) -> list[Hashable]:
    """The tuple keys among `keys` that start with `key_prefix` (all tuple keys when it is empty)."""
    return [k for k in keys if isinstance(k, tuple) and k[: len(key_prefix)] == key_prefix]


def describe_key(key: Hashable) -> str:
    """Human words for a protocol request key: which method, trajectory (or answer) and agent."""
    if isinstance(key, tuple) and len(key) == 5 and key[1] == "RRMaj":
        return f"RRMaj trajectory {key[3]}, agent {key[4]}"
    if isinstance(key, tuple) and len(key) == 4 and key[1] == "MAJ":
        return f"MAJ answer {key[3]}"
    return f"request {key!r}"


# Base (non-chat) models continue this plain completion format; chat models use their own template.
COMPLETION_FORMAT = "Question: {user}\nAnswer:"


def render_prompt_text(
    tokenizer,
    user: str,
    system: str | None = None,
    thinking: bool | None = None,
    bounded: bool = False,
) -> str:
    """What a model continues to answer `user`: the tokenizer's chat template with the assistant
    turn opened, or, when `tokenizer` is None (a base model), the completion format.

    `thinking` is the chat template's `enable_thinking` (Qwen3 and other reasoning models; a
    template that does not read it ignores it). None takes the model's setting,
    `rrdemo.backends.registry.thinking_for(tokenizer.name_or_path)`: off unless a registry entry turns it on,
    so RR agents answer directly instead of spending L on a hidden reasoning block.
    `bounded`: the template came from the hub and renders in the template worker
    (`rrdemo.backends.templates`).
    """
    if tokenizer is not None:
        if thinking is None:
            thinking = thinking_for(str(getattr(tokenizer, "name_or_path", "") or ""))
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": user}
        ]
        from rrdemo.backends.templates import render_transformers

        return render_transformers(tokenizer, messages, thinking, bounded)
    text = COMPLETION_FORMAT.format(user=user)
    return f"{system}\n\n{text}" if system else text


class Backend(ABC):
    """A model that agents write with. Implementations: transformers (local), OpenAI-compatible (served)."""

    name: str  # registry name or hub id, as shown in events and logs
    revision: str | None = None
    max_context: int | None = None  # tokens one sequence holds (prompt + new); None: not known
    loaded_from: str | None = None  # where the weights came from ("shipped file", "hub", ...)

    @abstractmethod
    def render_prompt(self, user: str, system: str | None = None) -> str:
        """The text this model continues to answer `user`: its chat template, or a completion format."""

    @abstractmethod
    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        """Continue every request's prompt together, streaming deltas and one `Finished` each."""

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` in this model's tokenizer (used for reporting, not for control)."""
        raise NotImplementedError

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[float, ...]]:
        """Per request, the natural-log probability of each candidate's tokens (teacher-forced)
        after its prompt and cue. Backends that cannot read probabilities refuse."""
        raise RRError(f"{self.name}: the meter is not supported on this backend")

    def prefixes(self, text: str, every: int) -> list[tuple[int, str]]:
        """(n, the text of the first n tokens) for n = every, 2 every, ... and the whole text
        last: where the meter reads an answer written in one turn (MAJ) at RR's turn lengths."""
        raise RRError(f"{self.name}: the meter is not supported on this backend")

    def release(self, key_prefix: tuple = ()) -> None:  # noqa: B027 - optional hook
        """Forget state kept for keys starting with `key_prefix` (all state when empty)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Free what the backend holds that garbage collection would not (llama.cpp's context
        and weights); the backend is unusable afterwards. Default: nothing to free."""
