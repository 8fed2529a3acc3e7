"""The in-process llama.cpp backend: the real GGUF files, KV reuse, prefix sharing, batching,
UTF-8 turn ends, sequence bookkeeping, and the engine in the config hash (sampling from logits:
test_llamacpp_native.py; choosing the engine: test_choice.py)."""

from __future__ import annotations

import pytest

from bench.variants import BenchLlamaCpp, LlamaCppNoPrefixSharing
from rrdemo.backends.base import Delta, Finished, GenerationRequest
from rrdemo.backends.choice import with_backends
from rrdemo.backends.llamacpp_rows import HEADS
from rrdemo.backends.registry import _OFFLINE_FILES
from rrdemo.backends.tokens import common_prefix
from rrdemo.config import AgentSpec, RunConfig, Sampling
from rrdemo.errors import RRError
from rrdemo.protocols import run_question
from rrdemo.tasks import get_task
from tests.support.llama import (
    GREEDY,
    OneModel,
    cached_keys,
    finish,
    free_sequences,
    llama,
    needs_llama,
    twin,
)

MODELS = ("smollm2", "gemma3-270m")


# -- logic: no model ------------------------------------------------------------------------------
def test_the_engine_is_in_the_logged_config_and_its_hash():
    old = RunConfig(agents=(AgentSpec("smollm2", True), AgentSpec("smollm2")))
    logged = old.to_dict()
    assert [a["backend"] for a in logged["agents"]] == ["transformers", "transformers"]
    assert RunConfig.from_dict(logged).config_hash() == old.config_hash()
    llama = old.with_(
        agents=tuple(AgentSpec(a.model, a.corrupted, backend="llamacpp") for a in old.agents)
    )
    assert llama.config_hash() != old.config_hash()
    assert RunConfig.from_dict(llama.to_dict()) == llama
    assert with_backends(old, "transformers") == old


# -- the real GGUF files --------------------------------------------------------------------------
@needs_llama
@pytest.mark.parametrize("name", MODELS)
def test_offline_gguf_loads_as_shipped_and_generates(llama_pool, name):
    from rrdemo.backends.llamacpp import LlamaCppBackend

    backend = llama(llama_pool, name)
    assert (
        isinstance(backend, LlamaCppBackend) and llama_pool.get(name, None, "llamacpp") is backend
    )
    assert backend.path == _OFFLINE_FILES[name]()  # the shipped file itself, no conversion
    prompt = backend.render_prompt("Name a colour.")
    done = finish(backend, ("load", name), prompt, 5)
    assert 1 <= done.n_tokens <= 5 and done.text.strip()
    assert done.prefill_tokens == len(
        backend.encode(prompt)
    ) and done.decode_tokens == done.n_tokens + (done.finish_reason == "eos")
    backend.release(("load",))


# llama.cpp's CPU kernels are not batch-invariant: a row's logits can differ in the last bits with
# the number of tokens run together, and greedy text flips at a near-tie (how often:
# test_llamacpp_batching.py). A prefix reused across a re-tokenized boundary runs in other pieces
# than one prefilled from scratch; the case below hits such a near-tie.
KNOWN_NEAR_TIE = pytest.mark.xfail(
    reason="float rounding differs between batch shapes in llama.cpp's CPU kernels", strict=True
)


@needs_llama
@pytest.mark.parametrize("name", ["smollm2", pytest.param("gemma3-270m", marks=KNOWN_NEAR_TIE)])
def test_kv_reuse_across_a_boundary_that_retokenizes_equals_prefill_from_scratch(llama_pool, name):
    backend = twin(llama(llama_pool, name))
    scratch = twin(backend, LlamaCppNoPrefixSharing)
    key = ("reuse", name)
    first_turn = backend.render_prompt("Is this statement true? Answer briefly.") + "It is def"
    finish(backend, key, first_turn, 1)
    cached = backend._seqs.cached[key].ids
    next_turn = first_turn + "initely true, because"  # "def" + "initely" re-tokenizes
    ids = backend.encode(next_turn)
    assert common_prefix(cached, ids) < len(cached), "the boundary must re-tokenize"
    reused = finish(backend, key, next_turn, 8)
    fresh = finish(scratch, key, next_turn, 8)
    assert reused.text == fresh.text and reused.n_tokens == fresh.n_tokens
    assert fresh.prefill_tokens == len(ids)
    assert reused.prefill_tokens < len(ids) // 2
    # Another key with the same prompt copies the cells (seq_cp) instead of recomputing them.
    other = finish(backend, ("reuse-other", name), next_turn, 8)
    assert other.text == fresh.text and other.prefill_tokens == 1
    for b in (backend, scratch):
        b.close()


@needs_llama
def test_a_turn_never_ends_inside_a_utf8_character(llama_pool):
    backend = llama(llama_pool, "smollm2")
    prompt = backend.render_prompt("Translate 'hello' into Japanese.")
    extended = {}
    for k in (1, 2, 3):
        text, extended[k] = "", 0
        for _turn in range(6):  # writes Japanese: most characters are two byte-level tokens
            request = GenerationRequest(("utf8", k), prompt + text, k, GREEDY, 0, room=100)
            outs = list(backend.generate([request]))
            done = outs[-1]
            assert isinstance(done, Finished)
            assert "\ufffd" not in done.text
            assert done.text == "".join(o.text for o in outs if isinstance(o, Delta))
            assert k <= done.n_tokens <= k + 3 or done.finish_reason == "eos"
            extended[k] += done.n_tokens > k
            text += done.text
            if done.finish_reason == "eos":
                break
        assert any(ord(c) > 0x3000 for c in text), text
    backend.release(("utf8",))
    assert extended[1] and sum(extended.values()) > extended[1], extended  # K=1 always splits


@needs_llama
def test_release_frees_sequences_and_a_stopped_run_leaves_only_its_heads(llama_pool):
    backend = twin(llama(llama_pool, "smollm2"))
    free = free_sequences(backend)
    task = get_task("custom")
    question = task.question("Pick one: (A) yes (B) no", gold="(A)")
    agents = (AgentSpec("smollm2", backend="llamacpp"),) * 2
    config = RunConfig(agents=agents, strength="none", k=3, max_tokens=6, m=2)
    stream = run_question(config, question, task, OneModel(backend))
    next(e for e in stream if e.kind == "chunk_written" and e.method == "RRMaj")
    assert free_sequences(backend) < free - 1
    stream.close()
    assert [key[0] for key in cached_keys(backend)] == [HEADS]  # one prompt: no injection
    assert free_sequences(backend) == free - 1
    events = list(run_question(config, question, task, OneModel(backend)))
    assert events[0].config["agents"][0]["backend"] == "llamacpp"
    assert free_sequences(backend) == free - 1
    backend.close()


@needs_llama
def test_a_request_longer_than_the_context_is_refused_clearly(llama_pool):
    backend = llama(llama_pool, "smollm2")
    prompt = backend.render_prompt("Hi")
    with pytest.raises(RRError, match="context holds"):
        list(
            backend.generate([GenerationRequest(("long",), prompt, backend.max_context, GREEDY, 0)])
        )
    assert ("long",) not in cached_keys(backend)


@pytest.mark.slow
@needs_llama
def test_chat_prompt_matches_the_transformers_template(real_pool, llama_pool):
    hf, lc = real_pool.get("smollm2"), llama(llama_pool, "smollm2")
    for system in (None, "Be brief."):
        text = hf.render_prompt("What is 6 times 7?", system)
        assert lc.render_prompt("What is 6 times 7?", system) == text
        assert lc.encode(text) == hf.encode(text)


@pytest.mark.slow
@needs_llama
def test_one_trajectory_mixing_transformers_and_llama_cpp_agents(real_pool):
    task = get_task("custom")
    question = task.question("What is 6 times 7?", gold="42")
    config = RunConfig(
        agents=(
            AgentSpec("smollm2", True, backend="llamacpp"),
            AgentSpec("gemma3-270m", False),  # transformers
            AgentSpec("smollm2", False),  # transformers: the same model on the other engine
            AgentSpec("gemma3-270m", False, backend="llamacpp"),
        ),
        k=4,
        max_tokens=20,
        m=1,
        order="fixed",
        sampling=Sampling(temperature=0.7, seed=1),
    )
    events = list(run_question(config, question, task, real_pool, methods=("RRMaj",)))
    chunks = [e for e in events if e.kind == "chunk_written"]
    engines = [type(real_pool.get(a.model, None, a.backend)).__name__ for a in config.agents]
    assert engines == [
        "LlamaCppBackend",
        "TransformersBackend",
        "TransformersBackend",
        "LlamaCppBackend",
    ]
    assert [c.agent for c in chunks] == [t % 4 for t in range(len(chunks))]
    answer = next(e for e in events if e.kind == "answer_extracted")
    assert answer.text == "".join(c.text for c in chunks)
    assert sum(c.n_tokens for c in chunks) == answer.n_tokens
    for c in chunks[:-1]:  # every turn but the last adds K tokens (more only to end a character)
        assert 4 <= c.n_tokens <= 7


@needs_llama
def test_cost_accounting_at_an_equal_budget_on_llama_cpp(llama_pool):
    """bench.backends' numbers: N x L decode tokens for both methods; prompts are read about once."""
    from bench.backends import _One, arena_setting, run
    from rrdemo.agents import build_agents
    from rrdemo.corruption import make_injection
    from rrdemo.protocols import choose_target

    backend = twin(llama(llama_pool, "smollm2"), BenchLlamaCpp)
    config, question, task = arena_setting(k=3, max_tokens=9)  # N = 5, shuffled: 3 turns each
    maj = run(backend, config, question, task, ("MAJ",))
    rr = run(backend, config, question, task, ("RRMaj",))
    budget = config.n * config.max_tokens  # M = N trajectories of L tokens, N answers of L tokens
    assert maj["decode_tokens"] == rr["decode_tokens"] == budget
    target = choose_target(task, question, config)
    injection = make_injection(config.strength, target, config.custom_template)
    agents = build_agents(config, _One(backend), task.prompt(question), injection)
    prompts = [len(backend.encode(a.prompt)) for a in agents]
    corrupted = next(p for p, a in zip(prompts, agents, strict=True) if a.corrupted)
    honest = next(p for p, a in zip(prompts, agents, strict=True) if not a.corrupted)
    # MAJ: each prompt is read once (its head: all but its last token, kept across runs), and
    # each of the 5 answers runs its prompt's last token.
    assert maj["prefill_tokens"] <= corrupted + honest + 3
    # RRMaj: 15 turns; without reuse or copies each would read its speaker's whole prompt.
    assert rr["prefill_tokens"] < 3 * sum(prompts) / 2
    assert all(key[0] == HEADS for key in cached_keys(backend))  # the run left its heads only


def test_backends_bench_refuses_bad_options_and_writes_its_readme_section(tmp_path, capsys):
    from bench.backends import END, SECTION, START, main, write_readme

    assert main(["--k", "10", "--max-tokens", "5", "--out", str(tmp_path / "r.json")]) == 2
    assert "--max-tokens at least --k" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
    readme = tmp_path / "README.md"
    readme.write_text("# Benchmarks\n\n## Cost\n\ntext\n")
    write_readme(readme, "| old |", START, END, SECTION)
    write_readme(readme, "| new |", START, END, SECTION)
    text = readme.read_text()
    assert text.startswith("# Benchmarks\n\n## Cost\n\ntext") and "| new |" in text
    assert "| old |" not in text and text.count(START) == text.count(END) == 1
