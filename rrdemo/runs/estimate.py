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
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rrdemo.runs.spec import Condition, Plan
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
        text = (
            f"estimate: {self.units:,} units; decode at most {self.decode:,} tokens, prefill about "
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
    """(prefill, decode) of one question of `condition` whose prompt has `prompt_tokens` tokens."""
    cfg = condition.config
    m, length = cfg.resolved_m, cfg.max_tokens
    speakers = min(cfg.n, math.ceil(length / cfg.k))
    maj = m * prompt_tokens
    rrmaj = m * speakers * (prompt_tokens + length)
    return maj + rrmaj, 2 * m * length


def estimate_plan(plan: Plan, counter_for: Callable[[str], tuple[Counter, str]]) -> TokenEstimate:
    """The plan's tokens; `counter_for(model)` gives a prompt counter and what it is (a phrase)."""
    prefill = decode = 0.0
    ways: dict[str, None] = {}
    for condition in plan.conditions:
        count, way = counter_for(condition.config.agents[0].model)
        ways[way] = None
        style = condition.config.prompt_style
        for question in condition.questions:
            text = styled_prompt(condition.task.prompt(question), style)
            unit_prefill, unit_decode = unit_tokens(condition, count(text))
            prefill += unit_prefill
            decode += unit_decode
    return TokenEstimate(plan.n_units, round(prefill), round(decode), tuple(ways))


def rough_count(text: str) -> int:
    return max(1, round(len(text) / CHARS_PER_TOKEN))


def local_counters(tokenizers: Mapping[str, str | None]) -> Callable[[str], tuple[Counter, str]]:
    """`counter_for` reading each model's tokenizer where it is on this machine already (a
    registry model's converted copy or GGUF file, a local folder or .gguf file, a hub id in the
    hub cache) and counting roughly otherwise; `tokenizers` maps served models to their
    tokenizer source (rrdemo.ensemble.ServedAgent.tokenizer)."""
    loaded: dict[str | None, tuple[Counter, str]] = {}

    def counter_for(model: str) -> tuple[Counter, str]:
        source = tokenizers.get(model, model)
        if source not in loaded:
            tokenizer = _local_tokenizer(source) if source else None
            if tokenizer is None:
                loaded[source] = rough_count, f"{CHARS_PER_TOKEN} characters a token (rough)"
            else:
                loaded[source] = (
                    lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"]),
                    f"the {source} tokenizer",
                )
        return loaded[source]

    return counter_for


def _local_tokenizer(source: str):
    """The tokenizer of `source` when it loads without a download, a conversion of weights or
    an assembly of a parted file; else None. One read from a GGUF file (tens of seconds for a
    large vocabulary on a busy CPU) is kept under the cache's tokenizers/ for the next plan."""
    from transformers import AutoTokenizer

    from rrdemo.backends.registry import REGISTRY, gguf_on_disk

    cache = Path(os.environ.get("RRDEMO_CACHE_DIR") or Path(".cache") / "rrdemo")
    info = REGISTRY.get(source)
    name = info.name if info else source
    folders = [cache / "tokenizers" / name, cache / "models" / name] if info else []
    for folder in [*folders, Path(source)]:
        if (folder / "tokenizer_config.json").is_file():
            return AutoTokenizer.from_pretrained(folder)
    gguf = gguf_on_disk(info) if info else None
    if gguf is None and source.lower().endswith(".gguf") and Path(source).is_file():
        gguf = Path(source)
    if gguf is not None:
        print(f"reading the {source} tokenizer from {gguf.name} ...", file=sys.stderr)
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        if info:  # a registry model: keep the copy (another process may be writing it too)
            tmp = cache / "tokenizers" / f"{name}.tmp{os.getpid()}"
            tokenizer.save_pretrained(tmp)
            if not (cache / "tokenizers" / name).exists():
                tmp.replace(cache / "tokenizers" / name)
        return tokenizer
    hub_id = info.hub_id if info and info.hub_id else source
    if "/" in hub_id and not Path(hub_id).exists():
        try:  # already in the hub cache (a model used before); never downloads
            return AutoTokenizer.from_pretrained(hub_id, local_files_only=True)
        except (OSError, ValueError):
            return None
    return None


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
