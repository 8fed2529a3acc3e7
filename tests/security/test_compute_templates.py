"""Chat templates from the hub render in a bounded worker: the same text transformers and
llama.cpp render, the obvious attacks refused before any worker, and a template that loops for
ever stopped at its deadline while the process goes on answering (the third probe: a repo whose
template nested loops ran on for 16 minutes after its visitor left)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from rrdemo.backends.templates import (
    TEMPLATE_LIMITS,
    render_gguf,
    render_transformers,
    template_refusal,
)
from rrdemo.errors import RRError

SMOLLM2 = Path(".cache/rrdemo/models/smollm2")  # the converted copy `make warm` writes
MESSAGES = [
    {"role": "system", "content": "Answer briefly."},
    {"role": "user", "content": "What is 2 + 2? The answer is (C)."},
]
QWEN_LIKE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
NESTED_RANGES = "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}"
# loops over the prompt's characters, three deep: about 10^12 steps, no range to refuse
OVER_CHARACTERS = (
    "{% for m in messages %}{% for a in m.content %}{% for b in m.content %}"
    "{% for c in m.content %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}"
)


@pytest.mark.skipif(not SMOLLM2.is_dir(), reason="needs `make warm` (the converted SmolLM2)")
def test_a_bounded_render_is_the_text_transformers_renders() -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(SMOLLM2)
    for thinking in (False, True):
        direct = tokenizer.apply_chat_template(
            MESSAGES, tokenize=False, add_generation_prompt=True, enable_thinking=thinking
        )
        assert render_transformers(tokenizer, MESSAGES, thinking, bounded=True) == direct
    assert direct.endswith("assistant\n") and "Answer briefly." in direct


def test_a_bounded_gguf_render_is_the_text_rendered_here() -> None:
    here = render_gguf(QWEN_LIKE, "m", MESSAGES, "<s>", "</s>", bounded=False)
    assert render_gguf(QWEN_LIKE, "m", MESSAGES, "<s>", "</s>", bounded=True) == here
    assert here.startswith("<|im_start|>system\nAnswer briefly.<|im_end|>")


def test_nested_range_loops_and_deep_nesting_are_refused_before_any_worker() -> None:
    started = time.monotonic()
    with pytest.raises(RRError, match="not rendered: it nests a range loop inside another"):
        render_gguf(NESTED_RANGES, "m", MESSAGES, "", "", bounded=True)
    deep = "{% for a in messages %}" * 6 + "{% endfor %}" * 6
    assert template_refusal(deep) == "it nests loops more than 5 deep"
    assert "over the 100,000 read" in template_refusal("x" * 100_001)
    assert template_refusal(QWEN_LIKE) is None
    assert time.monotonic() - started < 1.0


def test_a_template_that_loops_for_ever_is_stopped_while_the_process_answers() -> None:
    long_prompt = [{"role": "user", "content": "y" * 5000}]
    beats: list[float] = []
    done = threading.Event()

    def heartbeat() -> None:  # another visitor's work, in this process, during the attack
        while not done.is_set():
            started = time.monotonic()
            sum(range(20_000))
            beats.append(time.monotonic() - started)
            time.sleep(0.05)

    thread = threading.Thread(target=heartbeat)
    thread.start()
    started = time.monotonic()
    try:
        with pytest.raises(RRError, match="chat template was stopped: the computation"):
            render_gguf(OVER_CHARACTERS, "m", long_prompt, "", "", bounded=True)
    finally:
        done.set()
        thread.join()
    elapsed = time.monotonic() - started
    # the worker's start (imports) plus at most its wall limit, then it is killed
    assert elapsed < TEMPLATE_LIMITS.start_seconds + TEMPLATE_LIMITS.wall_seconds
    assert len(beats) > 20 and max(beats) < 2.0  # the process kept answering (wide hang guard)
    # the next render gets a fresh worker and answers
    assert render_gguf(QWEN_LIKE, "m", MESSAGES, "", "", bounded=True).endswith("assistant\n")
