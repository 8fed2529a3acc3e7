"""The cost benchmark: bad options are refused before any model loads; a tiny real run (slow)
produces every number the issue asks for, at an equal decoding budget, and the README table."""

from __future__ import annotations

import json

import pytest

from bench.cost import main, run_benchmark
from bench.options import BenchOptions
from bench.report import TABLE_END, TABLE_START, render_table, write_readme


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--n", "0"], "--n must be at least 1"),
        (["--n", "3", "--c", "4"], "--c must be between 0 and --n"),
        (["--k", "300", "--max-tokens", "256"], "must be at least K"),
        (["--m", "0"], "M (RR trajectories) must be at least 1"),
        (["--questions", "0"], "--questions must be between 1 and 50"),
    ],
)
def test_bad_options_exit_2_with_one_line(argv, words, capsys, tmp_path):
    out = tmp_path / "results.json"
    assert main([*argv, "--out", str(out), "--readme", str(tmp_path / "README.md")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error:") and words in err
    assert not out.exists()  # nothing written on bad input


def test_readme_table_is_replaced_between_markers_and_text_around_it_is_kept(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Bench\n\nintro\n\n{TABLE_START}\nold table\n{TABLE_END}\n\nafter\n")
    write_readme(readme, "| new | table |")
    write_readme(readme, "| newer | table |")
    text = readme.read_text()
    assert "old table" not in text and "| new |" not in text and "| newer | table |" in text
    assert text.startswith("# Bench\n\nintro") and text.rstrip().endswith("after")
    assert text.count(TABLE_START) == 1 and text.count(TABLE_END) == 1


@pytest.mark.slow
def test_tiny_real_benchmark_reports_equal_decode_budget_and_all_keys(real_pool, tmp_path):
    import torch

    # L = N x K with a shuffled order: every trajectory has N turns, one per agent.
    opts = BenchOptions(n=3, c=2, k=2, max_tokens=6, repeats=1, questions=1, threads=1)
    threads = torch.get_num_threads()
    try:
        results = run_benchmark(opts, real_pool.get("smollm2"), log=lambda _: None)
    finally:
        torch.set_num_threads(threads)
    for key in (
        "rrmaj_over_maj_wall_ratio",
        "prefill_tokens_per_trajectory_ratio",
        "decode_throughput_ratio_vs_generate",
        "peak_rss_ratio_5_agents_vs_1",
        "speakers_per_trajectory",
        "machine",
    ):
        assert results[key] is not None, key
    assert {"cores", "torch", "cpu"} <= set(results["machine"])
    # Equal decoding budget: N answers of L tokens vs M = N trajectories of L tokens.
    budget = opts.n * opts.max_tokens * opts.questions
    assert results["maj"]["decode_tokens"] == results["rrmaj"]["decode_tokens"] == budget
    variants = results["variants"]
    assert variants["no_batching"]["decode_tokens"] == budget
    # Every agent speaks in the headline setting (N turns of K, a permutation of the agents);
    # the corrupted-only row (fixed order, K = L) is one turn by the first corrupted agent.
    assert results["speakers_per_trajectory"] == opts.n
    assert results["rrmaj"]["turns"] == opts.n * opts.n * opts.questions
    assert (
        results["rrmaj"]["prompt_changes"] >= 1
    )  # honest and corrupted prompts alternate somewhere
    old = results["corrupted_only"]
    assert old["rrmaj"]["speakers_per_trajectory"] == 1 and old["rrmaj"]["prompt_changes"] == 0
    assert old["maj"]["decode_tokens"] == old["rrmaj"]["decode_tokens"] == budget
    # Without reuse every turn reads its speaker's whole prompt and the text so far; with prefix
    # sharing, the M trajectories' first turns read each distinct prompt about once.
    speakers_prompts = results["rrmaj"]["speakers_prompt_tokens"]
    assert variants["no_kv_reuse"]["prefill_tokens"] > speakers_prompts
    assert results["rrmaj"]["prefill_tokens"] < speakers_prompts / 2
    assert old["rrmaj"]["prefill_tokens"] < old["rrmaj"]["speakers_prompt_tokens"] / 2
    assert results["wall_ratio_rrmaj_over_maj"]["median"] > 0
    assert results["throughput"]["decode_tokens_per_s_engine"]["median"] > 0
    memory = results["memory"]
    assert memory["n_agents"]["n"] == opts.n and memory["one_agent"]["n"] == 1
    assert memory["one_agent"]["weights_mb"] > 50  # SmolLM2-135M in float32
    assert set(results["targets"]) >= {"rrmaj_over_maj_wall_ratio", "one_copy_of_weights"}
    json.dumps(results)  # results.json must be plain JSON
    table = render_table(results)
    assert str(results["rrmaj"]["prefill_tokens"]) in table and results["machine"]["torch"] in table
