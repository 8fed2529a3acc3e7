"""Counting a model's tokens in a text with its own tokenizer, without loading its weights.

One home for "this model's tokenizer, from what this machine holds": a saved tokenizer (the
cache's tokenizers/ copy, a converted model, a local folder), else the vocabulary of its GGUF file
(through llama.cpp's `vocab_only` load, well under a second, when llama-cpp-python is installed;
else transformers' GGUF reader, tens of seconds for a large vocabulary, whose result is kept under
the cache's tokenizers/), else a hub id already in the hub cache. Nothing is downloaded; a parted
GGUF file is assembled only when the caller asks (`assemble=True`: it runs the model anyway).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from rrdemo.errors import RRError
from rrdemo.paths import cache_dir

Counter = Callable[[str], int]


def _transformers_counter(tokenizer) -> Counter:
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def _llama_vocab_counter(path: Path) -> Counter | None:
    """Counts by llama.cpp's own tokenizer of the GGUF file; None without llama-cpp-python."""
    try:
        from rrdemo.backends.llamacpp_native import Vocab, idle_threads_sleep, quiet_llama_logs

        idle_threads_sleep()
        import llama_cpp
        import llama_cpp.llama_cpp as ll
    except ImportError:
        return None
    quiet_llama_logs(llama_cpp)
    ll.llama_backend_init()
    params = ll.llama_model_default_params()
    params.vocab_only = True
    model = ll.llama_model_load_from_file(str(path).encode(), params)
    if not model:
        raise RRError(f"llama.cpp could not read the vocabulary of {str(path)!r}")
    vocab = Vocab(ll, model)
    return lambda text: len(vocab.tokenize(text, add_special=False))


def _gguf_counter(path: Path, keep_as: str | None) -> Counter:
    """Counts by the GGUF file's vocabulary; transformers' read is kept as `keep_as` in the
    cache's tokenizers/ (another process may be writing it too: written aside, then moved)."""
    counter = _llama_vocab_counter(path)
    if counter is not None:
        return counter
    from transformers import AutoTokenizer

    print(f"reading the tokenizer of {path.name} ...", file=sys.stderr)
    tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name)
    if keep_as:
        kept = cache_dir() / "tokenizers" / keep_as
        tmp = kept.with_name(f"{keep_as}.tmp{os.getpid()}")
        tokenizer.save_pretrained(tmp)
        if not kept.exists():
            tmp.replace(kept)
    return _transformers_counter(tokenizer)


@lru_cache(maxsize=8)  # a vocabulary loads once per process (a few MB each)
def token_counter(source: str, assemble: bool = False) -> tuple[Counter, str] | None:
    """A counter of the tokens of `source` (a registry name, a local folder or .gguf file, a hub
    id) and what it is ("the qwen2.5-coder-1.5b tokenizer"); None when its tokenizer is not on
    this machine. `assemble`: a parted GGUF file may be assembled to read it."""
    from transformers import AutoTokenizer

    from rrdemo.backends.registry import REGISTRY, gguf_on_disk, gguf_path

    info = REGISTRY.get(source)
    name = info.name if info else source
    what = f"the {name} tokenizer"
    folders = [cache_dir() / "tokenizers" / name, cache_dir() / "models" / name] if info else []
    for folder in [*folders, Path(source)]:
        if (folder / "tokenizer_config.json").is_file():
            return _transformers_counter(AutoTokenizer.from_pretrained(folder)), what
    gguf = gguf_on_disk(info) if info else None
    if gguf is None and info and assemble:
        try:
            gguf = gguf_path(info)
        except (OSError, RRError):
            gguf = None
    if gguf is None and source.lower().endswith(".gguf") and Path(source).is_file():
        gguf = Path(source)
    if gguf is not None and gguf.is_file():
        return _gguf_counter(gguf, name if info else None), what
    hub_id = info.hub_id if info and info.hub_id else source
    if "/" in hub_id and not Path(hub_id).exists():
        try:  # already in the hub cache (a model used before); never downloads
            tokenizer = AutoTokenizer.from_pretrained(hub_id, local_files_only=True)
        except (OSError, ValueError):
            return None
        return _transformers_counter(tokenizer), what
    return None
