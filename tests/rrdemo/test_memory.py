"""The memory budget: a run's peak memory estimated from its agents' model shapes, N, M, L and
the engine, refused before anything loads when it is over `RRDEMO_MAX_MEMORY_GB`, at every door
that starts runs (Arena, web sweep, `rrdemo run`, `rrdemo experiment`)."""

from __future__ import annotations

import math

import pytest

from rrdemo.backends.pool import ModelPool
from rrdemo.backends.shape import RECORDED, ModelShape
from rrdemo.cli import main
from rrdemo.config import AgentSpec, RunConfig
from rrdemo.errors import RRError
from rrdemo.memory import (
    DEFAULT_MEMORY_GB,
    LLAMA_BYTES_PER_PARAM,
    MEMORY_ENV,
    PROMPT_TOKENS,
    check_memory,
    estimate_memory,
    memory_budget,
)

SMOLLM2 = ModelShape.from_config(RECORDED["HuggingFaceTB/SmolLM2-135M-Instruct"])
KEY = ("smollm2", None, "transformers", None)


def _never(*args, **options):
    pytest.fail("a refused run must not load a model")


@pytest.mark.parametrize(
    ("hub_id", "params", "kv_bytes"),
    [
        # the parameter counts transformers reports for these models
        ("HuggingFaceTB/SmolLM2-135M-Instruct", 134_515_008, 2 * 30 * 3 * 64),
        ("Qwen/Qwen2.5-0.5B-Instruct", 494_032_768, 2 * 24 * 2 * 64),
        ("meta-llama/Llama-3.1-8B-Instruct", 8_030_261_248, 2 * 32 * 8 * 128),
    ],
)
def test_a_config_declares_its_parameters_and_kv_cache(hub_id, params, kv_bytes) -> None:
    shape = ModelShape.from_config(RECORDED[hub_id])
    assert shape.params == params
    assert shape.kv_bytes_per_token(1) == kv_bytes  # keys and values, per layer and kv head
    with pytest.raises(RRError, match="no valid hidden_size"):
        ModelShape.from_config({**RECORDED[hub_id], "hidden_size": "big"})


def test_the_estimate_counts_weights_once_and_a_cache_per_live_sequence(monkeypatch) -> None:
    for name in ("RRDEMO_LLAMA_N_CTX", "RRDEMO_LLAMA_SEQS"):  # the engine's defaults
        monkeypatch.delenv(name, raising=False)
    agents = (AgentSpec("smollm2", corrupted=True),) + (AgentSpec("smollm2"),) * 3
    config = RunConfig(agents=agents, k=16, m=5, max_tokens=64)
    per_token = SMOLLM2.kv_bytes_per_token(4)  # float32
    length = PROMPT_TOKENS + 64
    both = estimate_memory(config, {KEY: SMOLLM2})
    # MAJ: 4 answers; RRMaj: 5 trajectories x 4 writers (64 / 16 = 4 turns each)
    assert both.weights == SMOLLM2.params * 4
    assert both.sequences == 4 + 5 * 4 and both.tokens == length
    assert both.kv == both.sequences * length * per_token
    few_turns = estimate_memory(config.with_(k=32), {KEY: SMOLLM2}, methods=("RRMaj",))
    assert few_turns.sequences == 5 * 2  # 2 turns: only 2 of the 4 agents write in each
    half = estimate_memory(config, {KEY: SMOLLM2}, default_dtype="bfloat16", methods=("MAJ",))
    assert half.weights == SMOLLM2.params * 2 and half.kv == 4 * length * per_token // 2
    # llama.cpp: a 5-bit file and the fixed context it allocates, whatever N, M and L
    gguf = config.with_(
        agents=tuple(a.__class__(a.model, a.corrupted, backend="llamacpp") for a in agents)
    )
    fixed = estimate_memory(gguf, {("smollm2", None, "llamacpp", None): SMOLLM2})
    assert fixed.weights == int(SMOLLM2.params * LLAMA_BYTES_PER_PARAM)
    assert fixed.kv == 2048 * 32 * SMOLLM2.kv_bytes_per_token(2) and fixed.sequences == 0
    monkeypatch.setenv("RRDEMO_LLAMA_N_CTX", "1024")  # what a llama.cpp model would allocate
    monkeypatch.setenv("RRDEMO_LLAMA_SEQS", "16")
    smaller = estimate_memory(gguf, {("smollm2", None, "llamacpp", None): SMOLLM2})
    assert smaller.kv == fixed.kv // 4
    assert estimate_memory(config, {KEY: None}).total == 0  # a model nothing says: not counted


def test_the_budget_comes_from_the_environment(monkeypatch) -> None:
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    assert memory_budget(public=True) == DEFAULT_MEMORY_GB * 1e9  # a 16 GB CPU Space
    assert memory_budget(public=False) > 0  # the command line: this machine's memory
    monkeypatch.setenv(MEMORY_ENV, "2.5")
    assert memory_budget(public=True) == memory_budget(public=False) == 2.5e9
    for bad in ("lots", "0", "-1", "nan", "inf"):
        monkeypatch.setenv(MEMORY_ENV, bad)
        with pytest.raises(RRError, match=f"{MEMORY_ENV} must be a positive number of GB"):
            memory_budget(public=True)


def _issue_agents() -> str:
    """The 64-agent request of the probe: `smollm2, honest|corrupted` lines."""
    return "\n".join(f"smollm2, {'corrupted' if i % 2 else 'honest'}" for i in range(64))


def test_the_64_agent_arena_request_is_refused_before_anything_loads(monkeypatch) -> None:
    from ui.arena import stream_run
    from ui.state import ArenaRequest

    monkeypatch.setenv(MEMORY_ENV, "4")
    request = ArenaRequest(
        ensemble="per agent", agents=_issue_agents(), m=0, max_tokens=1024, k=8,
        eos_policy="pass", temperature=1.5,
    )  # fmt: skip
    pool = ModelPool(_never, public=True)
    with pytest.raises(RRError):  # the first call imports what checking needs (torch, ...)
        next(stream_run(request, pool))
    before = _rss()
    with pytest.raises(RRError) as refused:
        next(stream_run(request, pool))
    message = str(refused.value)
    # 64 MAJ answers + 64 trajectories x 64 writers, each up to 512 + 1024 tokens, float32
    sequences = 64 + 64 * 64
    kv = sequences * (PROMPT_TOKENS + 1024) * SMOLLM2.kv_bytes_per_token(4)
    assert f"{sequences} sequences of up to {PROMPT_TOKENS + 1024} tokens" in message
    assert f"KV caches {kv / 1e9:.1f} GB" in message
    assert f"over the limit of 4.0 GB ({MEMORY_ENV})" in message
    assert pool.loaded() == []
    assert _rss() - before < 20e6  # nothing was built


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def test_the_command_line_run_and_experiment_check_the_same_budget(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv(MEMORY_ENV, "1")
    code = main(
        ["run", "--question", "Which? (A) x (B) y", "--gold", "(A)", "--models", "smollm2",
         "--agents", "64", "--m", "64", "--max-tokens", "1024", "--k", "8",
         "--backend", "transformers"]
    )  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "over the limit of 1.0 GB (RRDEMO_MAX_MEMORY_GB)" in err[0]
    out = tmp_path / "sweep.jsonl"
    code = main(
        ["experiment", "--tasks", "logic3", "--model", "smollm2", "--configs", "8c8t",
         "--k", "64", "--max-tokens", "1024", "--n", "1", "--backend", "transformers",
         "--out", str(out)]
    )  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "over the limit of 1.0 GB (RRDEMO_MAX_MEMORY_GB)" in err[-1]
    assert not out.exists()


def test_a_web_sweep_is_refused_by_its_largest_condition(monkeypatch) -> None:
    import threading

    from ui.experiments_tab import run_sweep

    monkeypatch.setenv(MEMORY_ENV, "1")
    settings = {"tasks": ["logic3"], "models": ["smollm2"], "configs": "0c1t,8c8t",
                "strengths": ["strong"], "k": 64, "max_tokens": 1024, "n": 1, "seed": 0,
                "adversaries": ["static"]}  # fmt: skip
    with pytest.raises(RRError, match=r"over the limit of 1\.0 GB"):
        next(run_sweep(settings, ModelPool(_never, public=True), threading.Event()))
    small = check_memory([RunConfig(agents=(AgentSpec("smollm2"),), k=8, max_tokens=64)],
                         ModelPool(_never, public=True), public=True)  # fmt: skip
    assert 0 < small.total < 1e9 and math.isclose(small.weights, SMOLLM2.params * 4)


def test_models_the_pool_keeps_count_and_the_least_recent_make_room(monkeypatch) -> None:
    """A run's estimate plus the models the pool keeps loaded for others must fit the budget:
    kept models the run does not use are let go, least recently used first, until they do."""
    import torch

    from tests.support.fakes import FakeBackend

    def load(name: str, revision=None, **options) -> FakeBackend:
        backend = FakeBackend(name, lambda prompt: "A")
        backend.model = torch.nn.Linear(500, 500)  # 1,002,000 bytes of float32 weights
        return backend

    pool = ModelPool(load, max_models=4, hub=None)
    for name in ("org/one", "org/two", "org/three"):
        pool.get(name)
    run = RunConfig(agents=(AgentSpec("smollm2"),), k=8, max_tokens=64)
    need = estimate_memory(run, {KEY: SMOLLM2}, default_dtype="float32").total
    check_memory([run], pool, public=True, budget=need + 3_100_000)  # all three fit
    assert pool.loaded() == ["org/one", "org/two", "org/three"]
    pool.get("org/one")  # used again: org/two is now the least recently used
    check_memory([run], pool, public=True, budget=need + 2_100_000)
    assert pool.loaded() == ["org/three", "org/one"]
    both = run.with_(agents=(AgentSpec("org/three"), AgentSpec("org/one")))
    check_memory([both], pool, public=True, budget=need)  # what a run uses is never let go
    assert pool.loaded() == ["org/three", "org/one"]
    with pytest.raises(RRError, match="over the limit"):
        check_memory([run], pool, public=True, budget=need - 1)
    assert pool.loaded() == ["org/three", "org/one"]  # a refused run lets nothing go
