"""The floor benchmark: bad options are refused before any model loads, and its table shows
RRMaj / floor, RRMaj / MAJ and decode against the llama.cpp reference per model."""

from __future__ import annotations

import pytest

from bench.floor import main, render


@pytest.mark.parametrize("argv", [["--repeats", "0"], ["--max-tokens", "8"], ["--steps", "0"]])
def test_bad_options_exit_2_and_write_nothing(argv, capsys, tmp_path):
    out, readme = tmp_path / "f.json", tmp_path / "README.md"
    assert main([*argv, "--out", str(out), "--readme", str(readme)]) == 2
    assert capsys.readouterr().err.startswith("error:")
    assert not out.exists() and not readme.exists()


def test_the_table_has_one_block_per_model_with_the_floor_and_the_reference():
    def spread(x):
        return {"median": x, "min": x, "max": x, "n": 1}

    engine = {
        "load_s": 1.0,
        "MAJ": spread(10.0),
        "RRMaj": spread(12.6),
        "floor_s": spread(12.0),
        "over_floor": spread(1.05),
        "over_maj": spread(1.26),
        "prefill_s": spread(0.01),
        "extra_prefill": 200,
        "suffix": 20,
        "MAJ_tok_s": 64.0,
        "setting": {
            "task": "logic3",
            "question": "logic3-0000",
            "prompt_style": "direct",
            "k": 50,
            "max_tokens": 256,
        },
        "decode": {
            "engine": spread(90.0),
            "reference": spread(100.0),
            "engine_settings": spread(95.0),
            "over_reference": spread(0.9),
        },
    }
    machine = {
        "cpu": "cpu",
        "cores": 2,
        "llama_cpp": "0.3",
        "llama_threads": 2,
        "torch": "2",
        "torch_threads": 2,
        "load_average_start": "0.1",
    }
    table = render(
        {
            "machine": machine,
            "repeats": 1,
            "clock": "wall",
            "models": {"smollm2": {"llamacpp": engine}, "qwen": {"llamacpp": engine}},
        }
    )
    assert table.count("| RRMaj / floor |") == 2 and "**1.05 [1.05-1.05]**" in table
    assert "90.0 / 100.0 / 95.0 | 0.9 [0.9-0.9]" in table
