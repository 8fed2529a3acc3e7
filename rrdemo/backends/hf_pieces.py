"""The bytes each token of a transformers tokenizer adds to a text (what the row decoder reads).

A tokenizer's decoder turns token strings back into text in one of two ways our models use:
byte-level BPE (SmolLM2, Qwen, Llama 3), whose token strings spell bytes in GPT-2's printable
alphabet, and SentencePiece pieces (Gemma, Llama 2), where "▁" is a space and `<0xE2>` a raw
byte. Special tokens (end of turn, padding) add nothing, as `decode(skip_special_tokens=True)`
skips them. A decoder of another kind gives each token's own decoded text.
"""

from __future__ import annotations

import json
import re

_RAW_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def _byte_alphabet() -> dict[str, int]:
    """GPT-2's byte-level alphabet: the character that stands for each byte, mapped to it."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    stand_in = {byte: byte for byte in printable}
    for byte in range(256):
        if byte not in stand_in:
            stand_in[byte] = 256 + len(stand_in) - len(printable)
    return {chr(char): byte for byte, char in stand_in.items()}


def _decoder_kind(tokenizer) -> str:
    """ "bytes" (byte-level BPE), "pieces" (SentencePiece) or "text" (any other decoder)."""
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    if decoder is None:
        return "text"
    state = json.loads(decoder.__getstate__())
    kinds = {state.get("type"), *(d.get("type") for d in state.get("decoders", ()))}
    if "ByteLevel" in kinds:
        return "bytes"
    return "pieces" if kinds & {"ByteFallback", "Metaspace", "Replace"} else "text"


class TokenBytes:
    """`tokenizer`'s bytes per token id, read off its vocabulary once per token."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer = tokenizer
        added = getattr(tokenizer, "added_tokens_decoder", None) or {}
        self._silent = {*tokenizer.all_special_ids, *(i for i, t in added.items() if t.special)}
        self._kind = _decoder_kind(tokenizer)
        self._alphabet = _byte_alphabet() if self._kind == "bytes" else {}
        self._known: dict[int, bytes] = {}

    def __call__(self, token: int) -> bytes:
        known = self._known.get(token)
        if known is None:
            known = self._known[token] = self._read(token)
        return known

    def _read(self, token: int) -> bytes:
        if token in self._silent:
            return b""
        if self._kind == "text":
            return self.tokenizer.decode([token], skip_special_tokens=True).encode()
        piece = self.tokenizer.convert_ids_to_tokens(token)
        if self._kind == "bytes":
            alphabet = self._alphabet
            return b"".join(bytes([alphabet[c]]) if c in alphabet else c.encode() for c in piece)
        raw = _RAW_BYTE.fullmatch(piece)
        return bytes([int(raw.group(1), 16)]) if raw else piece.replace("\u2581", " ").encode()
