"""The tensor work of the transformers backend: batched KV caches and token sampling.

A batch of rows shares one left-padded `DynamicCache`: `merge` builds it from single-row caches,
`split` takes one row back out without its padding, and `view` starts a row from the first
tokens of another cache without copying them.
"""

from __future__ import annotations

import torch
from transformers import DynamicCache

from rrdemo.config import Sampling

# Top-p sampling looks at this many most likely tokens first, and sorts the whole vocabulary only
# when they do not cover the nucleus: sorting ~50k probabilities costs more than a decode step.
_TOP_CANDIDATES = 64
_NUCLEUS_MARGIN = 1e-4  # the candidates must pass top_p by this much, so rounding cannot matter


def _descending(probs: torch.Tensor, top_p: float) -> tuple[torch.Tensor, torch.Tensor]:
    """`probs` sorted in descending order with the order, or with only the leading candidates
    filled in (the rest zero) when those already hold more than `top_p` of the mass: the nucleus,
    and thus the draw below, is then the same as with a full sort."""
    k = min(_TOP_CANDIDATES, probs.shape[-1])
    values, order = torch.topk(probs, k)
    if k < probs.shape[-1] and float(values.sum()) > top_p + _NUCLEUS_MARGIN:
        head = torch.zeros_like(probs)
        head[:k] = values
        return head, order
    return torch.sort(probs, descending=True)


def sample_token(logits: torch.Tensor, sampling: Sampling, rng: torch.Generator) -> int:
    """Greedy at temperature 0; otherwise temperature + nucleus (top-p) sampling from `rng`."""
    if sampling.temperature == 0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits.float().cpu() / sampling.temperature, dim=-1)
    if sampling.top_p < 1.0:
        sorted_probs, order = _descending(probs, sampling.top_p)
        outside = torch.cumsum(sorted_probs, dim=-1) - sorted_probs > sampling.top_p
        sorted_probs[outside] = 0.0
        choice = torch.multinomial(sorted_probs / sorted_probs.sum(), 1, generator=rng)
        return int(order[choice])
    return int(torch.multinomial(probs, 1, generator=rng))


def sample_tokens(
    logits: torch.Tensor,
    samplings: list[Sampling],
    rngs: list[torch.Generator],
    batched: bool | None = None,
) -> list[int]:
    """`sample_token` for every row of `logits`. On a GPU the softmax and each row's leading
    candidates are computed for all rows at once and copied back in one transfer, instead of one
    copy of the whole vocabulary per row; rows whose candidates do not cover the nucleus (or that
    sample without one) fall back to `sample_token`. On a CPU it is `sample_token` row by row
    (`batched` None: decided by the device)."""
    if not (logits.device.type != "cpu" if batched is None else batched):
        pairs = zip(samplings, rngs, strict=True)
        return [sample_token(logits[b], s, r) for b, (s, r) in enumerate(pairs)]
    temperatures = torch.tensor(
        [s.temperature or 1.0 for s in samplings], device=logits.device
    ).unsqueeze(1)
    probs = torch.softmax(logits.float() / temperatures, dim=-1)
    k = min(_TOP_CANDIDATES, probs.shape[-1])
    values, order = torch.topk(probs, k)
    values, order, greedy = values.cpu(), order.cpu(), logits.argmax(dim=-1).cpu().tolist()
    top_p = torch.tensor([s.top_p for s in samplings]).unsqueeze(1)
    covered = ((top_p < 1.0) & (values.sum(dim=1, keepdim=True) > top_p + _NUCLEUS_MARGIN))[:, 0]
    heads = values.masked_fill(torch.cumsum(values, dim=-1) - values > top_p, 0.0)
    heads = heads / heads.sum(dim=1, keepdim=True)
    tokens = []
    for b, (sampling, rng) in enumerate(zip(samplings, rngs, strict=True)):
        if sampling.temperature == 0:
            tokens.append(greedy[b])
        elif covered[b]:
            tokens.append(int(order[b, torch.multinomial(heads[b], 1, generator=rng)]))
        else:
            tokens.append(sample_token(logits[b], sampling, rng))
    return tokens


def view(cache: DynamicCache, keep: int) -> DynamicCache:
    """A new cache holding views of the first `keep` tokens of `cache` (no copy: cache updates
    build new tensors instead of writing into old ones, so the views stay valid)."""
    return DynamicCache(
        [(layer.keys[:, :, :keep], layer.values[:, :, :keep]) for layer in cache.layers]
    )


def merge(caches: list[DynamicCache], device: torch.device) -> tuple[DynamicCache, torch.Tensor]:
    """One batched cache from single-row caches, left-padded with zeros to a common length."""
    lengths = [c.get_seq_length() for c in caches]
    longest = max(lengths)
    mask = torch.zeros((len(caches), longest), dtype=torch.long, device=device)
    for b, n in enumerate(lengths):
        mask[b, longest - n :] = 1
    if len(caches) == 1 or longest == 0:
        return (caches[0] if len(caches) == 1 else DynamicCache()), mask
    reference = caches[lengths.index(longest)]
    layers = []
    for layer_idx, ref in enumerate(reference.layers):
        keys, values = [], []
        for cache, n in zip(caches, lengths, strict=True):
            if n == 0:  # nothing cached yet: all padding
                keys.append(torch.zeros_like(ref.keys[:1]))
                values.append(torch.zeros_like(ref.values[:1]))
                continue
            k, v = cache.layers[layer_idx].keys, cache.layers[layer_idx].values
            pad = longest - n
            if pad:
                k = torch.nn.functional.pad(k, (0, 0, pad, 0))
                v = torch.nn.functional.pad(v, (0, 0, pad, 0))
            keys.append(k)
            values.append(v)
        layers.append((torch.cat(keys), torch.cat(values)))
    return DynamicCache(layers), mask


def split(cache: DynamicCache, mask: torch.Tensor, b: int) -> DynamicCache:
    """Row `b` of a batched cache, without its padding (left, and gaps after short suffixes)."""
    if mask.shape[0] == 1 and bool(mask.all()):
        return cache
    real = mask[b].nonzero().squeeze(1)
    first = int(real[0]) if len(real) else mask.shape[1]
    # Only left padding: one slice; gaps after short suffixes: pick the real positions.
    pick = slice(first, None) if len(real) == mask.shape[1] - first else real
    return DynamicCache(
        [
            (
                layer.keys[b : b + 1, :, pick, :].clone(),
                layer.values[b : b + 1, :, pick, :].clone(),
            )
            for layer in cache.layers
        ]
    )
