"""The transformers engine's prefill on the real SmolLM2: a long prompt runs in slices that write
the same tokens as one pass and can be stopped between them; its memory is counted in the
model's own tokens before any slice runs (the probe's 1,000 CJK Extension-B characters are about
4,000 tokens, not the 512 the estimate before loading allows); a run cancelled in the middle
gives its memory back."""

from __future__ import annotations

import gc

import pytest

from bench.variants import twin
from rrdemo.backends.base import Delta, Finished, GenerationRequest
from rrdemo.backends.hf import TransformersBackend
from rrdemo.config import AgentSpec, RunConfig, Sampling
from rrdemo.errors import RRError
from rrdemo.memory import MEMORY_ENV
from rrdemo.protocols import run_question
from rrdemo.tasks import get_task
from tests.support.served import rss_bytes

pytestmark = pytest.mark.slow
GREEDY = Sampling(temperature=0.0)
EXTENSION_B = "".join(chr(0x20000 + i) for i in range(1000))  # 4 UTF-8 bytes each


@pytest.fixture
def smollm2(real_pool) -> TransformersBackend:
    backend = twin(real_pool.get("smollm2"), TransformersBackend)
    yield backend
    backend.release()


def _requests(backend, texts, n=6) -> list[GenerationRequest]:
    prompts = [backend.render_prompt(text) for text in texts]
    return [GenerationRequest(("p", i), p, n, GREEDY, 0) for i, p in enumerate(prompts)]


def test_a_prefill_in_slices_writes_what_one_pass_writes(smollm2) -> None:
    texts = ["Name three colours and say which one you like best, and why. " * 3, "Name a fish."]
    whole = twin(smollm2, TransformersBackend)
    whole.prefill_tokens = 10_000
    one = list(whole.generate(_requests(whole, texts)))
    smollm2.prefill_tokens = 16  # 8 tokens of each row per pass
    sliced = list(smollm2.generate(_requests(smollm2, texts)))
    finished = lambda outs: [(o.index, o.text) for o in outs if isinstance(o, Finished)]  # noqa: E731
    assert finished(sliced) == finished(one)
    assert not [o for o in one if isinstance(o, Delta) and not o.text]  # one pass: no pause
    assert len([o for o in sliced if isinstance(o, Delta) and not o.text]) >= 3
    whole.release()


def test_a_long_prefill_stops_at_its_next_slice(smollm2, monkeypatch) -> None:
    passes: list[int] = []
    forward = smollm2.model.forward

    def counted(*args, **kwargs):
        passes.append(1)
        return forward(*args, **kwargs)

    monkeypatch.setattr(smollm2.model, "forward", counted)
    smollm2.prefill_tokens = 32
    outputs = smollm2.generate(_requests(smollm2, ["Tell me a story about a lighthouse. " * 40]))
    assert next(outputs) == Delta(0, "")  # the first slice ran; the caller may stop here
    outputs.close()
    assert len(passes) == 1  # not the ten slices of the whole prompt
    assert smollm2._caches == {}


def test_the_long_cjk_question_is_counted_in_the_models_tokens(smollm2) -> None:
    """The probe's question at N = 4: about 4,000 tokens for each agent, refused when their
    caches do not fit; an ordinary question of the same run fits the same budget."""
    prompt = get_task("custom").prompt(get_task("custom").question(EXTENSION_B))
    tokens = smollm2.count_tokens(prompt)
    assert tokens > 3900  # the worst case of the tokenizer: a token per UTF-8 byte
    weights, per_token, _ = smollm2._sizes()
    smollm2.memory_budget = lambda: weights + 4 * 1000 * per_token  # room for 1,000 tokens each
    with pytest.raises(RRError) as refused:
        list(smollm2.generate(_requests(smollm2, [prompt] * 4, n=8)))
    message = str(refused.value)
    assert (
        f"the longest prompt {len(smollm2.encode(smollm2.render_prompt(prompt))):,} tokens"
        in message
    )
    assert "over the limit of" in message and MEMORY_ENV in message
    done = list(smollm2.generate(_requests(smollm2, ["Name a colour."] * 4, n=8)))
    assert len([o for o in done if isinstance(o, Finished)]) == 4


def test_the_pool_hands_its_budget_to_the_engine(real_pool, monkeypatch) -> None:
    monkeypatch.setenv(MEMORY_ENV, "1.5")
    assert real_pool.get("smollm2").memory_budget() == 1.5e9


def test_a_run_cancelled_after_its_long_prefill_gives_its_memory_back(real_pool) -> None:
    """The probe's large run (a long question, N = 4), closed once every cache is built: the
    resident size comes back within 10% of where it started."""
    backend = real_pool.get("smollm2")
    task = get_task("custom")
    question = task.question(EXTENSION_B[:500])  # about 2,000 tokens for each of 4 agents
    config = RunConfig(agents=(AgentSpec("smollm2"),) * 4, k=4, max_tokens=64)
    list(run_question(config.with_(max_tokens=4), task.question("Name a colour."), task, real_pool))
    gc.collect()
    start = rss_bytes()
    events = run_question(config, question, task, real_pool, methods=("MAJ",))
    grown = 0
    for event in events:
        if event.kind == "token_delta" and event.text:  # decoding: every cache is built
            grown = rss_bytes() - start
            break
    events.close()
    gc.collect()
    assert grown > 4 * 2000 * backend._sizes()[1] * 0.8  # the caches were there
    assert rss_bytes() < start * 1.10
    assert backend._caches == {}
