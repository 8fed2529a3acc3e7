"""A turn never ends inside a character: with a byte-level tokenizer a K-token chunk may stop
between the bytes of one character; the engine then decodes the few tokens that finish it (never
past the request's room), and a chunk cut by its cap drops the incomplete bytes from its text."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from tokenizers import decoders

from rrdemo.backends.base import Finished, GenerationRequest
from rrdemo.backends.hf import TransformersBackend
from rrdemo.config import AgentSpec, RunConfig, Sampling

TEXT = "a×b≈c"  # '×' is 2 bytes, '≈' 3 bytes in UTF-8
BYTES = list(TEXT.encode())
GREEDY = Sampling(temperature=0.0)


class ByteTokenizer:
    """One token per byte, spelt `<0xE2>` like the byte fallback of real tokenizers."""

    chat_template = None
    eos_token_id = 256
    all_special_ids = [256]
    unk_token_id = None
    padding_side = "left"
    backend_tokenizer = SimpleNamespace(decoder=decoders.ByteFallback())

    def convert_ids_to_tokens(self, token):
        return f"<0x{token:02X}>"

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": list(text.encode())}

    def decode(self, ids, skip_special_tokens=True):
        return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")

    def convert_tokens_to_ids(self, token):
        return None


class ScriptedModel(torch.nn.Module):
    """Writes the bytes of TEXT after a prompt of `prompt_len` tokens, whatever the prompt says."""

    def __init__(self, prompt_len: int) -> None:
        super().__init__()
        self.prompt_len = prompt_len
        self.config = SimpleNamespace(max_position_embeddings=1024)
        self.generation_config = SimpleNamespace(eos_token_id=None)
        self.device = torch.device("cpu")

    def forward(self, input_ids, position_ids, **_):
        nxt = position_ids[:, -1] + 1 - self.prompt_len
        logits = torch.zeros((input_ids.shape[0], 1, 257))
        for b, i in enumerate(nxt.tolist()):
            logits[b, 0, BYTES[i] if i < len(BYTES) else 256] = 1.0
        return SimpleNamespace(logits=logits)


def _finish(k: int, room: int | None) -> Finished:
    prompt = "Say it: "
    backend = TransformersBackend(
        "bytes", ScriptedModel(len(prompt.encode())), ByteTokenizer(), chat=False
    )
    request = GenerationRequest(("t",), prompt, k, GREEDY, 0, room=room)
    return next(o for o in backend.generate([request]) if isinstance(o, Finished))


@pytest.mark.parametrize("k", range(1, len(BYTES)))
def test_a_turn_finishes_the_character_its_last_token_started(k):
    done = _finish(k, room=100)
    whole = TEXT.encode()[: done.n_tokens].decode()  # raises if the cut is inside a character
    assert done.text == whole and "\ufffd" not in done.text
    assert k <= done.n_tokens <= k + 2 and done.decode_tokens == done.n_tokens
    assert done.n_tokens > k or TEXT.encode()[:k].decode(errors="replace") == whole


@pytest.mark.parametrize("k", range(1, len(BYTES)))
def test_without_room_a_turn_stops_at_k_and_drops_the_incomplete_bytes(k):
    done = _finish(k, room=None)
    assert done.n_tokens == done.decode_tokens == k
    assert done.text == TEXT.encode()[:k].decode(errors="ignore") and "\ufffd" not in done.text


def test_room_caps_the_extra_tokens():
    # '≈' starts at byte 4 (3 bytes): K = 5 needs 2 more tokens, room 6 allows 1.
    done = _finish(5, room=6)
    assert done.n_tokens == 6 and done.text == "a×b"


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 2, 3])
def test_real_smollm2_round_robin_keeps_multibyte_characters_whole(real_pool, k):
    from rrdemo.protocols import run_question
    from rrdemo.tasks import get_task

    task = get_task("custom")
    question = task.question("Copy this line exactly: 12 × 3 ≈ 36 and 7 × 8 ≈ 56", gold="36")
    budget = 24
    config = RunConfig(
        agents=(AgentSpec("smollm2"), AgentSpec("smollm2")),
        strength="none",
        k=k,
        max_tokens=budget,
        m=1,
        sampling=GREEDY,
    )
    events = list(run_question(config, question, task, real_pool))
    chunks = [e for e in events if e.kind == "chunk_written" and e.method == "RRMaj"]
    text = "".join(c.text for c in chunks)
    assert "≈" in text and "\ufffd" not in text
    assert all(k <= c.n_tokens <= k + 3 for c in chunks[:-1])
    assert any(c.n_tokens > k for c in chunks)  # some turn did stop inside '≈' at K (test bites)
    used = {e.method: e for e in events if e.kind == "compute_used"}
    answer = next(e for e in events if e.kind == "answer_extracted" and e.method == "RRMaj")
    assert answer.n_tokens == sum(c.n_tokens for c in chunks) <= budget
    assert used["RRMaj"].decode_tokens == sum(c.n_tokens for c in chunks) + (
        answer.finish_reason == "eos"
    )
