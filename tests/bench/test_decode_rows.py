"""bench.decode_rows on the real llama.cpp engine (the small offline model, a few tokens): every
batch size is timed, its answers decode at most the tokens asked and the build is named."""

from __future__ import annotations

from bench.decode_rows import build_name, decode_rows
from tests.support.llama import needs_llama


@needs_llama
def test_each_batch_size_decodes_its_answers_and_names_the_build() -> None:
    found = decode_rows([3, 1], 4, model="smollm2")
    assert [r["rows"] for r in found] == [3, 1]
    for r in found:
        assert 0 < r["tokens"] <= 4 * r["rows"]
        assert r["seconds"] > 0 and r["tok_s"] == r["tokens"] / r["seconds"]
    assert build_name() in ("portable", "native (AVX-512)")
