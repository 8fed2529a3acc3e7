"""Turn policies (adaptive K) with scripted agents: boundaries, limits, validation, config, CLI."""

from __future__ import annotations

import pytest

from rrdemo.backends.base import GenerationRequest
from rrdemo.cli import build_parser
from rrdemo.cli.run import _config as run_cli_config
from rrdemo.config import RunConfig, Sampling
from rrdemo.errors import RRError
from rrdemo.protocols import run_question
from rrdemo.runs.spec import normalize_sweep, plan_sweep
from rrdemo.seats import homogeneous_agents
from rrdemo.speakers import max_turns, silence_warning
from rrdemo.turns import TurnPolicy, default_k_min, is_sentence_end, turn_over
from tests.support.fakes import QUESTION, FakeBackend, FakePool, FakeTask

TASK = FakeTask()
TEXT = "One two three. Four five six seven eight nine ten eleven twelve. The answer is (B)."
UNSURE = "hmm"  # the scripted writer's entropy before this word is high


def _config(**kw) -> RunConfig:
    settings = dict(
        k=6, max_tokens=30, m=1, order="fixed", sampling=Sampling(temperature=0.0, seed=3)
    )
    settings.update(kw)
    return RunConfig(agents=homogeneous_agents("fake", 3, 1), **settings)


def _chunks(config: RunConfig, script, entropy=None) -> list[tuple[int, str]]:
    backend = FakeBackend("fake", script, entropy)
    events = run_question(config, QUESTION, TASK, FakePool(backend), methods=("RRMaj",))
    return [(e.agent, e.text) for e in events if e.kind == "chunk_written"]


def _continues(text: str):
    """Each writer goes on with the part of `text` not yet written."""

    def script(prompt: str) -> str:
        shared = prompt.split("</user>\n", 1)[1]
        return text[len(shared) :]

    return script


# --- the pure rule --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("It is true.", True),
        ("Really?", True),
        ("Yes!", True),
        ('He said "no."', True),
        ("(see above.)", True),
        ("first line\n", True),
        ("first line\n  ", True),
        ("It is 3.", False),  # may be 3.14
        ("e.g", False),
        ("no end yet", False),
        ("Done. And", False),
    ],
)
def test_sentence_end_rule(text, end):
    assert is_sentence_end(text) is end


def test_fixed_is_over_exactly_at_k_whatever_the_text_or_entropy():
    policy = TurnPolicy("fixed", k_min=1, k_max=5)
    assert [turn_over(policy, n, "Done.", 9.0) for n in range(1, 7)] == [False] * 4 + [True] * 2


def test_sentence_waits_for_k_min_and_stops_at_k_max():
    policy = TurnPolicy("sentence", k_min=3, k_max=6)
    assert not turn_over(policy, 2, "Yes.")  # below K_min
    assert turn_over(policy, 3, "Yes it is.")
    assert not turn_over(policy, 5, "no end yet")
    assert turn_over(policy, 6, "no end yet")  # K_max


def test_uncertainty_passes_the_threshold_after_k_min_only():
    policy = TurnPolicy("uncertainty", k_min=2, k_max=8, entropy_threshold=1.5)
    assert not turn_over(policy, 1, "", 3.0)
    assert turn_over(policy, 2, "", 3.0)
    assert not turn_over(policy, 2, "", 1.5)  # passes means strictly above
    assert not turn_over(policy, 7, "", None)
    assert turn_over(policy, 8, "", 0.0)


# --- the protocol with a scripted backend ---------------------------------------------------------
def test_fixed_policy_keeps_k_token_turns_and_sends_no_policy_to_the_backend():
    config = _config()
    backend = FakeBackend("fake", _continues(TEXT))
    list(run_question(config, QUESTION, TASK, FakePool(backend), methods=("RRMaj",)))
    assert all(r.turn is None for call in backend.calls for r in call)
    chunks = _chunks(config, _continues(TEXT))
    assert [len(t.split()) for _, t in chunks[:-1]] == [6] * (len(chunks) - 1)


def test_sentence_turns_end_at_sentence_ends_after_k_min():
    chunks = _chunks(_config(turn_policy="sentence", k_min=2), _continues(TEXT))
    texts = [t for _, t in chunks]
    # "One two three." (3 >= K_min), then K_max = 6 words, then to the next sentence end.
    assert texts[0] == "One two three. "
    assert len(texts[1].split()) == 6 and not is_sentence_end(texts[1])
    assert texts[2] == "ten eleven twelve. "
    assert "".join(texts) == TEXT
    assert [a for a, _ in chunks] == [i % 3 for i in range(len(chunks))]


def test_sentence_end_before_k_min_does_not_end_the_turn():
    chunks = _chunks(_config(turn_policy="sentence", k_min=4), _continues(TEXT))
    assert chunks[0][1] == "One two three. Four five six "  # K_max = 6, no end at 4..5 words


def test_uncertainty_hands_the_uncertain_word_to_the_next_writer():
    text = "a b c hmm d e f g h i j hmm k. The answer is (B)."

    def entropy(word: str) -> float:
        return 5.0 if word.strip() == UNSURE else 0.1

    chunks = _chunks(_config(turn_policy="uncertainty", k_min=2), _continues(text), entropy)
    texts = [t for _, t in chunks]
    assert texts[0] == "a b c "  # ends before "hmm"
    assert texts[1].startswith("hmm ")  # the next writer writes it
    assert "".join(texts) == text


def test_uncertainty_respects_k_min_and_k_max():
    text = "hmm hmm hmm hmm hmm hmm hmm hmm hmm hmm hmm hmm (B)."

    def entropy(word: str) -> float:
        return 9.0

    config = _config(turn_policy="uncertainty", k_min=3, entropy_threshold=1.0)
    chunks = _chunks(config, _continues(text), entropy)
    assert all(len(t.split()) == 3 for _, t in chunks[:-1])  # every turn stops at K_min
    calm = _chunks(config, _continues(text), lambda word: 0.0)
    assert [len(t.split()) for _, t in calm[:2]] == [6, 6]  # never uncertain: K_max


def test_each_row_of_a_batch_ends_by_its_own_text():
    config = _config(turn_policy="sentence", k_min=1, m=2, order="shuffled")
    backend = FakeBackend("fake", _continues(TEXT))
    events = list(run_question(config, QUESTION, TASK, FakePool(backend), methods=("RRMaj",)))
    first = [e for e in events if e.kind == "chunk_written" and e.turn == 0]
    assert len(first) == 2 and all(e.text == "One two three. " for e in first)
    assert all(r.turn == config.turn for call in backend.calls for r in call)


def test_maj_answers_ignore_the_turn_policy():
    config = _config(turn_policy="sentence", k_min=1)
    backend = FakeBackend("fake", _continues(TEXT))
    list(run_question(config, QUESTION, TASK, FakePool(backend), methods=("MAJ",)))
    assert all(r.turn is None for call in backend.calls for r in call)


def test_the_served_backend_refuses_adaptive_turns():
    from rrdemo.backends.openai import OpenAIBackend

    backend = OpenAIBackend.__new__(OpenAIBackend)
    backend.name = "served"
    request = GenerationRequest(
        ("k",), "p", 4, Sampling(), 0, turn=TurnPolicy("sentence", k_min=1, k_max=4)
    )
    with pytest.raises(RRError, match="cannot use the turn policy 'sentence'.*'fixed'"):
        list(backend.generate([request]))


# --- config, validation, hash ---------------------------------------------------------------------
def test_turn_settings_are_hashed_and_k_min_defaults_to_a_quarter_of_k():
    config = _config()
    assert {k: config.to_dict()[k] for k in ("turn_policy", "k_min", "entropy_threshold")} == {
        "turn_policy": "fixed",
        "k_min": None,
        "entropy_threshold": 2.0,
    }
    adaptive = config.with_(turn_policy="uncertainty")
    assert adaptive.config_hash() != config.config_hash()
    assert adaptive.to_dict()["turn_policy"] == "uncertainty"
    assert RunConfig.from_dict(adaptive.to_dict()) == adaptive
    assert adaptive.turn == TurnPolicy("uncertainty", default_k_min(6), 6, 2.0)
    assert [default_k_min(k) for k in (1, 3, 4, 8, 100)] == [1, 1, 1, 2, 25]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"turn_policy": "words"}, "unknown turn policy 'words'; allowed: fixed, sentence"),
        ({"k_min": 0}, r"K_min \(fewest tokens per turn\) must be between 1 and K \(6\), got 0"),
        ({"k_min": 7}, r"between 1 and K \(6\), got 7"),
        ({"entropy_threshold": 0}, "entropy threshold must be a positive number of nats"),
        ({"entropy_threshold": float("nan")}, "entropy threshold must be a positive number"),
    ],
)
def test_bad_turn_settings_are_clear_errors(changes, message):
    with pytest.raises(RRError, match=message):
        _config(**changes)


# --- CLI and sweep --------------------------------------------------------------------------------
def test_run_cli_flags_reach_the_config():
    argv = ["run", "--question", "Q? (A) x (B) y", "--k", "8", "--turn-policy", "uncertainty"]
    args = build_parser().parse_args([*argv, "--k-min", "3", "--entropy-threshold", "1.5"])
    config, _ = run_cli_config(args)
    assert (config.turn_policy, config.k_min, config.entropy_threshold) == ("uncertainty", 3, 1.5)
    plain, _ = run_cli_config(build_parser().parse_args(argv[:-2]))
    assert (plain.turn_policy, plain.k_min, plain.entropy_threshold) == ("fixed", None, 2.0)


def test_experiment_cli_and_sweep_expand_turn_policies():
    from rrdemo.cli.experiment import sweep_from_args

    args = build_parser().parse_args(
        ["experiment", "--turn-policies", "fixed,sentence", "--k-min", "2", "--out", "x.jsonl"]
    )
    raw = sweep_from_args(args)
    assert normalize_sweep(raw)["turn_policies"] == ["fixed", "sentence"]
    assert normalize_sweep({})["turn_policies"] == ["fixed"]  # the paper's rule by default
    plan = plan_sweep(
        {**raw, "tasks": ["demo"], "configs": ["1c1t"], "n_agents": 2, "n": 1, "k": [8]}
    )
    policies = {(c.config.turn_policy, c.config.k_min) for c in plan.conditions}
    assert policies == {("fixed", None), ("sentence", 2)}
    assert len(plan.conditions) == 2 * len(plan.sweep["strengths"])
    with pytest.raises(RRError, match="unknown turn policy 'nope'"):
        normalize_sweep({"turn_policies": "fixed,nope"})


# --- who can speak --------------------------------------------------------------------------------
def test_speakers_bound_turns_by_k_min_for_adaptive_policies():
    config = RunConfig(agents=homogeneous_agents("fake", 5, 2), k=8, max_tokens=16, order="fixed")
    assert max_turns(config) == 2
    assert "ceil(L/K) = 2" in silence_warning(config)
    adaptive = config.with_(turn_policy="sentence", k_min=4)
    assert max_turns(adaptive) == 4
    assert "ceil(L/K_min) = 4" in silence_warning(adaptive)
    assert silence_warning(config.with_(turn_policy="sentence", k_min=2)) is None


# --- the Arena ------------------------------------------------------------------------------------
def test_the_arena_turn_length_control_reaches_the_config():
    from ui.state import ArenaRequest, build_config

    config = build_config(ArenaRequest(k=8, turn_policy="sentence"))
    assert config.turn == TurnPolicy("sentence", 2, 8)
    assert build_config(ArenaRequest()).turn_policy == "fixed"
    with pytest.raises(RRError, match="unknown turn policy 'words'"):
        build_config(ArenaRequest(turn_policy="words"))


# --- the report -----------------------------------------------------------------------------------
def test_the_report_splits_the_main_table_and_k_ablation_by_turn_policy(tmp_path):
    from rrdemo.report.write import build_report
    from rrdemo.runs.log import read_run
    from rrdemo.runs.runner import run_plan
    from rrdemo.runs.spec import Condition, Plan
    from tests.support.fakes import (
        QUESTIONS,
        obeys_injection,
    )

    conditions = []
    for policy in ("fixed", "sentence"):
        for k in (2, 4):
            for c in (0, 1, 3):
                config = RunConfig(
                    agents=homogeneous_agents("fake", 3, c),
                    k=k,
                    m=3,
                    max_tokens=12,
                    sampling=Sampling(temperature=0.0, seed=1),
                    turn_policy=policy,
                )
                conditions.append(Condition(FakeTask(), config, QUESTIONS))
    log = tmp_path / "run.jsonl"
    plan = Plan({"fake": True}, tuple(conditions))
    run_plan(plan, log, FakePool(FakeBackend("fake", obeys_injection)), progress=False)
    report = build_report(read_run(log))
    assert sorted({(r.ensemble, r.k) for r in report.main_rows}) == [
        ("fake", 2),
        ("fake", 4),
        ("fake [turns: sentence]", 2),
        ("fake [turns: sentence]", 4),
    ]
    ablation = report.files["k_ablation.md"]
    assert "fake [turns: sentence]" in ablation and "### RRMaj accuracy (%), fake," in ablation
