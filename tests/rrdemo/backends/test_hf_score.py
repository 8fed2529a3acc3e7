"""The meter's scoring on the transformers backend (SmolLM2): cached prefix and from scratch agree."""

from __future__ import annotations

import math

import pytest
import torch

from rrdemo.backends.base import ScoreRequest
from rrdemo.meter import CUE

pytestmark = pytest.mark.slow
QUESTION = "Which is larger, 7 or 9? Options: (A) 7 (B) 9"


def _direct(backend, prompt: str, cue: str, candidate: str) -> float:
    """log p(candidate | prompt + cue) by one forward pass over everything."""
    ids = backend.encode(prompt)
    cue_ids = backend.tokenizer(cue, add_special_tokens=False)["input_ids"]
    tail = backend.tokenizer(cue + candidate, add_special_tokens=False)["input_ids"][len(cue_ids) :]
    with torch.inference_mode():
        logits = backend.model(input_ids=torch.tensor([ids + cue_ids + tail])).logits[0]
    logp = torch.log_softmax(logits.float(), dim=-1)
    start = len(ids) + len(cue_ids) - 1
    return float(sum(logp[start + i, t] for i, t in enumerate(tail)))


def test_scores_on_the_cached_prefix_match_a_full_forward_pass(real_pool):
    backend = real_pool.get("smollm2")
    prompt = backend.render_prompt(QUESTION)
    key = ("hf-score", 0)
    backend.score([ScoreRequest(key, prompt + "Nine", CUE, (" (B).", " (A)."))])
    text = prompt + "Nine is larger."
    [(b, a)] = backend.score([ScoreRequest(key, text, CUE, (" (B).", " (A)."))])
    assert b == pytest.approx(_direct(backend, text, CUE, " (B)."), abs=1e-3)
    assert a == pytest.approx(_direct(backend, text, CUE, " (A)."), abs=1e-3)
    assert math.exp(a) + math.exp(b) <= 1
    backend.release(("hf-score",))
