"""What a sweep will cost before it runs: tokens to prefill and decode, and time at a given rate.

Per (condition, question) unit both methods write M* texts of at most L tokens each (MAJ's M*
answers, RRMaj's M* trajectories), so decoding is at most 2 x M* x L tokens. Prefill counts what
the local engines compute with their KV reuse: every MAJ answer reads its prompt once; in an RR
trajectory each agent that speaks (at most min(N, ceil(L / K)) of them) reads its prompt once and
then what the others wrote, at most L tokens. A server without prefix caching prefills more (each
turn re-sends the whole text); one with it (vLLM, TGI) about this much. Prompt lengths are the
question's prompt text (no chat template, no injection) counted by the first agent's tokenizer
when it is on this machine already (an offline model's GGUF file counts), else roughly, at
`CHARS_PER_TOKEN` characters a token.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from rrdemo.runs.spec import Condition, Plan
from rrdemo.tasks.base import Question
from rrdemo.tasks.benchmarks import styled_prompt

CHARS_PER_TOKEN = 4  # the rough count: English text runs about 4 characters a token
Counter = Callable[[str], int]


@dataclass(frozen=True)
class TokenEstimate:
    """A sweep's tokens (upper bounds of decode, the local engines' prefill) and its time."""

    units: int
    prefill: int
    decode: int
    counted_by: tuple[str, ...]  # how prompts were counted, one phrase per way used

    def seconds(self, tokens_per_second: float) -> float:
        """Decoding time at `tokens_per_second` (prefill runs many times faster; not counted)."""
        return self.decode / tokens_per_second

    def describe(self, tokens_per_second: float | None = None) -> str:
        if not self.units:
            return "estimate: no units left to run, nothing to decode"
        text = (
            f"estimate: {self.units:,} units left; decode at most {self.decode:,} tokens, prefill about "
            f"{self.prefill:,} tokens (prompts counted by {', '.join(self.counted_by)})"
        )
        if tokens_per_second:
            text += (
                f"; at {tokens_per_second:g} tokens/s about "
                f"{_duration(self.seconds(tokens_per_second))} of decoding"
            )
        else:
            text += "; give --tokens-per-second for a time"
        return text


def unit_tokens(condition: Condition, prompt_tokens: float) -> tuple[float, int]:
    """(prefill, decode) of one question of `condition` whose prompt has `prompt_tokens` tokens,
    for the methods it runs."""
    cfg = condition.config
    m, length = cfg.resolved_m, cfg.max_tokens
    speakers = min(cfg.n, math.ceil(length / cfg.k))
    maj = (m * prompt_tokens, m * length)
    rrmaj = (m * speakers * (prompt_tokens + length), m * length)
    runs = [
        cost for method, cost in (("MAJ", maj), ("RRMaj", rrmaj)) if method in condition.methods
    ]
    return sum(p for p, _ in runs), sum(d for _, d in runs)


def estimate_plan(
    plan: Plan,
    counter_for: Callable[[str], tuple[Counter, str]],
    units: Iterable[tuple[Condition, Question]] | None = None,
) -> TokenEstimate:
    """The tokens of the plan's `units` (default: all of them; a dry run passes the units not
    yet in the log); `counter_for(model)` gives a prompt counter and what it is (a phrase)."""
    if units is None:
        units = [(c, q) for c in plan.conditions for q in c.questions]
    prefill = decode = 0.0
    counters: dict[str, tuple[Counter, str]] = {}  # one counter per model, made once
    counted = 0
    for condition, question in units:
        model = condition.config.agents[0].model
        if model not in counters:
            counters[model] = counter_for(model)
        count = counters[model][0]
        text = styled_prompt(condition.task.prompt(question), condition.config.prompt_style)
        unit_prefill, unit_decode = unit_tokens(condition, count(text))
        prefill += unit_prefill
        decode += unit_decode
        counted += 1
    ways = tuple(dict.fromkeys(way for _, way in counters.values()))
    return TokenEstimate(counted, round(prefill), round(decode), ways)


def rough_count(text: str) -> int:
    return max(1, round(len(text) / CHARS_PER_TOKEN))


def local_counters(tokenizers: Mapping[str, str | None]) -> Callable[[str], tuple[Counter, str]]:
    """`counter_for` counting each model's tokens with its tokenizer where it is on this machine
    already (`rrdemo.backends.counting.token_counter`; nothing is downloaded or assembled) and
    roughly otherwise; `tokenizers` maps served models to their tokenizer source
    (rrdemo.ensemble.ServedAgent.tokenizer)."""
    from rrdemo.backends.counting import token_counter

    def counter_for(model: str) -> tuple[Counter, str]:
        source = tokenizers.get(model, model)
        found = token_counter(source) if source else None
        return found or (rough_count, f"{CHARS_PER_TOKEN} characters a token (rough)")

    return counter_for


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
