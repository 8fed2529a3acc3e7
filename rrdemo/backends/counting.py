"""Counting a model's tokens in a text without loading its weights.

A GGUF model's vocabulary loads alone through llama.cpp (`vocab_only`, well under a second for
the 1.5B) when llama-cpp-python is installed, else through transformers' GGUF tokenizer reader;
a converted copy or a local folder loads its `tokenizer.json`. Nothing is downloaded: a model
whose tokenizer is not on this machine has no counter (None).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from rrdemo.errors import RRError
from rrdemo.paths import cache_dir

Counter = Callable[[str], int]


def gguf_counter(path: Path) -> Counter:
    """Token counts of texts by the vocabulary of the GGUF file at `path` (no special tokens)."""
    try:
        from rrdemo.backends.llamacpp_native import Vocab, idle_threads_sleep, quiet_llama_logs

        idle_threads_sleep()
        import llama_cpp
        import llama_cpp.llama_cpp as ll
    except ImportError:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
        return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])
    quiet_llama_logs(llama_cpp)
    ll.llama_backend_init()
    params = ll.llama_model_default_params()
    params.vocab_only = True
    model = ll.llama_model_load_from_file(str(path).encode(), params)
    if not model:
        raise RRError(f"llama.cpp could not read the vocabulary of {str(path)!r}")
    vocab = Vocab(ll, model)
    return lambda text: len(vocab.tokenize(text, add_special=False))


def folder_counter(folder: Path) -> Counter:
    """Token counts by the tokenizer saved in `folder` (a converted copy, a local model)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


@lru_cache(maxsize=4)  # a vocabulary loads once per process (a few MB each)
def token_counter(model: str) -> tuple[Counter, str] | None:
    """A counter of `model`'s tokens and what it is ("the qwen2.5-coder-1.5b tokenizer"), from
    what this machine holds; None when its tokenizer is not here."""
    from rrdemo.backends.registry import gguf_path, resolve

    try:
        info = resolve(model)
    except RRError:
        return None
    for folder in (cache_dir() / "models" / info.name, Path(model)):
        if (folder / "tokenizer_config.json").is_file():
            return folder_counter(folder), f"the {info.name} tokenizer"
    try:
        path = gguf_path(info)
    except (OSError, RRError):
        path = None
    if path is not None and path.is_file():
        return gguf_counter(path), f"the {info.name} tokenizer"
    return None
