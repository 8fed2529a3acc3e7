"""Qwen3-style thinking mode is a per-model prompt option, off by default for RR (no network)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from transformers import PreTrainedTokenizerFast

from rrdemo.backends import registry
from rrdemo.backends.base import render_prompt_text

# The part of Qwen3's chat template that reads enable_thinking (an empty think block = thinking off).
QWEN3_LIKE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n"
    "{% endif %}{% endif %}"
)
PLAIN = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
OFF = "<think>\n\n</think>"


def tokenizer(template: str, name: str) -> PreTrainedTokenizerFast:
    tok = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    )
    tok.chat_template = template
    tok.name_or_path = name
    return tok


@pytest.mark.parametrize("name", ["Qwen/Qwen3-30B-A3B", "Qwen/Qwen3-0.6B", "my/local-model"])
def test_thinking_is_off_by_default_for_registry_and_other_hub_ids(name: str) -> None:
    text = render_prompt_text(tokenizer(QWEN3_LIKE, name), "What is 2+2?")
    assert text.endswith("<|im_start|>assistant\n" + OFF + "\n\n")
    assert "What is 2+2?" in text


def test_thinking_can_be_turned_on_per_call_and_per_model(monkeypatch) -> None:
    tok = tokenizer(QWEN3_LIKE, "Qwen/Qwen3-30B-A3B")
    assert OFF not in render_prompt_text(tok, "q", thinking=True)
    assert OFF in render_prompt_text(tok, "q", thinking=False)
    # a registry entry that turns thinking on is honoured through its hub id
    entry = registry.REGISTRY["Qwen/Qwen3-30B-A3B"]
    monkeypatch.setitem(registry.REGISTRY, entry.name, replace(entry, thinking=True))
    assert registry.thinking_for("Qwen/Qwen3-30B-A3B") is True
    assert OFF not in render_prompt_text(tok, "q")


def test_templates_without_the_option_are_unchanged() -> None:
    tok = tokenizer(PLAIN, "HuggingFaceTB/SmolLM2-135M-Instruct")
    assert render_prompt_text(tok, "q", thinking=True) == render_prompt_text(tok, "q")
    assert render_prompt_text(tok, "q").endswith("<|im_start|>assistant\n")
    assert registry.ModelInfo("x", "x").thinking is False
