"""The Arena's wait: bad options are refused before any model loads; a real short pass times the
first text and the whole run, and a question asked again reads no prompt and writes the same."""

from __future__ import annotations

import json

import pytest

from bench.interactive import main
from tests.support.llama import needs_llama


@pytest.mark.parametrize(
    "argv", [["--questions", "0"], ["--questions", "5"], ["--max-tokens", "4"]]
)
def test_bad_options_exit_2_and_write_nothing(argv, capsys, tmp_path):
    out, readme = tmp_path / "i.json", tmp_path / "README.md"
    assert main([*argv, "--out", str(out), "--readme", str(readme)]) == 2
    assert capsys.readouterr().err.startswith("error:")
    assert not out.exists() and not readme.exists()


@needs_llama
def test_a_question_asked_again_starts_from_its_heads_with_the_same_text(tmp_path, capsys):
    out, readme = tmp_path / "i.json", tmp_path / "README.md"
    argv = ["--models", "smollm2", "--max-tokens", "8", "--out", str(out), "--readme", str(readme)]
    assert main(argv) == 0
    r = json.loads(out.read_text())["models"]["smollm2"]
    new, again = r["new"][0], r["again"][0]
    assert r["same_text"] is True
    assert 0 < again["prefill_MAJ"] < new["prefill_MAJ"]  # the prompts were not read again
    for marks in (new, again):
        assert 0 < marks["first"] <= marks["total"]
        assert marks["decode_MAJ"] > 0 and marks["decode_RRMaj"] > 0
    table = readme.read_text()
    assert "| smollm2 | 4 | 8 |" in table and "| True |" in table
    capsys.readouterr()
