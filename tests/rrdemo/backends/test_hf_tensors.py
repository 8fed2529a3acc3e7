"""Token sampling of the transformers backend: the batched (GPU) path draws what the row path draws."""

from __future__ import annotations

import torch

from rrdemo.backends.hf_tensors import sample_token, sample_tokens
from rrdemo.config import Sampling


def _draws(batched: bool, logits, samplings, seed: int) -> list[int]:
    rngs = [torch.Generator().manual_seed(seed + b) for b in range(len(samplings))]
    if batched is None:
        return [
            sample_token(logits[b], s, r)
            for b, (s, r) in enumerate(zip(samplings, rngs, strict=True))
        ]
    return sample_tokens(logits, samplings, rngs, batched=batched)


def test_batched_sampling_draws_the_row_by_row_tokens():
    torch.manual_seed(0)
    vocab = 5000
    peaked = torch.randn(4, vocab) * 8  # the top candidates cover the nucleus: the fast path
    flat = torch.randn(2, vocab) * 0.1  # they do not: the fallback path
    logits = torch.cat([peaked, flat])
    samplings = [
        Sampling(temperature=0.7, top_p=0.95),
        Sampling(temperature=0.0),
        Sampling(temperature=1.0, top_p=1.0),
        Sampling(temperature=0.3, top_p=0.9),
        Sampling(temperature=0.7, top_p=0.95),
        Sampling(temperature=0.0),
    ]
    for seed in range(50):
        expected = _draws(None, logits, samplings, seed)
        assert _draws(True, logits, samplings, seed) == expected
        assert _draws(False, logits, samplings, seed) == expected


def test_batched_sampling_follows_the_distribution():
    logits = torch.log(torch.tensor([[0.6, 0.3, 0.1] + [1e-9] * 97]))
    counts = torch.zeros(100)
    sampling = Sampling(temperature=1.0, top_p=0.95)
    for seed in range(400):
        rng = torch.Generator().manual_seed(seed)
        counts[sample_tokens(logits, [sampling], [rng], batched=True)[0]] += 1
    assert counts[3:].sum() == 0
    assert 200 < counts[0] < 280 and 90 < counts[1] < 150
