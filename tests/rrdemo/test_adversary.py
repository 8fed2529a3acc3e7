"""EOS policies, prompt styles and adversary strategies with scripted agents; config, sweep, report."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from rrdemo.adversary import CONTEXTUAL_TEXT, STRATEGIES, get_strategy, last_turn
from rrdemo.config import ADVERSARIES, RunConfig, Sampling
from rrdemo.errors import RRError
from rrdemo.protocols import run_question
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import Condition, Plan, normalize_sweep, plan_sweep
from rrdemo.seats import homogeneous_agents
from rrdemo.tasks.benchmarks import PROMPT_STYLES
from tests.support.fakes import QUESTION, FakeBackend, FakePool, FakeTask, obeys_injection

REASONING_CUE = PROMPT_STYLES["step-by-step"].cue

ROOT = Path(__file__).resolve().parents[2]
TASK = FakeTask()


def _config(n: int = 3, c: int = 1, **kw) -> RunConfig:
    settings = dict(
        k=3, max_tokens=12, m=1, order="fixed", sampling=Sampling(temperature=0.0, seed=7)
    )
    settings.update(kw)
    return RunConfig(agents=homogeneous_agents("fake", n, c), **settings)


def _rr(config: RunConfig, script) -> tuple[list, FakeBackend]:
    backend = FakeBackend("fake", script)
    events = list(run_question(config, QUESTION, TASK, FakePool(backend), methods=("RRMaj",)))
    return events, backend


def _chunks(events, trajectory: int = 0) -> list:
    return [e for e in events if e.kind == "chunk_written" and e.trajectory == trajectory]


def _answer(events, trajectory: int = 0):
    return next(e for e in events if e.kind == "answer_extracted" and e.trajectory == trajectory)


def shared(prompt: str) -> str:
    """The shared text an agent reads after its own prompt."""
    return prompt.split("</user>\n", 1)[1]


def answers_once(prompt: str) -> str:
    """Writes the answer if nobody has yet, else passes at once (end-of-sequence, no token)."""
    return "" if "The answer is" in shared(prompt) else "I think. The answer is (B)."


# --- EOS policy -----------------------------------------------------------------------------------
def test_end_policy_closes_the_trajectory_at_the_first_writers_eos():
    events, _ = _rr(_config(k=8, max_tokens=24, eos_policy="end"), answers_once)
    chunks = _chunks(events)
    assert [(c.turn, c.agent, c.n_tokens) for c in chunks] == [(0, 0, 6)]
    assert _answer(events).finish_reason == "eos"


def test_pass_policy_ends_the_turn_and_closes_after_n_writers_in_a_row_pass():
    n = 4
    events, _ = _rr(_config(n=n, c=1, k=8, max_tokens=40, eos_policy="pass"), answers_once)
    chunks = _chunks(events)
    # Turn 0 writes the answer and ends with EOS; each of the next N turns passes without a token.
    assert [(c.turn, c.agent, c.n_tokens) for c in chunks] == [(0, 0, 6)] + [
        (t, t % n, 0) for t in range(1, n + 1)
    ]
    answer = _answer(events)
    assert answer.finish_reason == "eos" and answer.answer == "(B)"
    assert answer.last_agent == 0  # who wrote the last token, not the last agent to pass


def test_a_writer_who_adds_tokens_resets_the_run_of_passes():
    said = {"n": 0}

    def script(prompt: str) -> str:  # the second writer after the answer speaks once more
        text = shared(prompt)
        if "The answer is" in text and "again" not in text:
            said["n"] += 1
            return "again." if said["n"] == 2 else ""
        return answers_once(prompt)

    n = 3
    events, _ = _rr(_config(n=n, c=0, k=8, max_tokens=40, eos_policy="pass"), script)
    tokens = [c.n_tokens for c in _chunks(events)]
    assert tokens == [6, 0, 1, 0, 0, 0]  # the pass before "again." does not count towards N
    assert _answer(events).finish_reason == "eos"


def test_pass_policy_stops_at_l_and_never_decodes_more_than_m_times_l():
    # Every writer adds one word and ends its turn: each turn decodes 2 tokens (word + EOS).
    n, m, length = 3, 3, 10
    config = _config(n=n, c=1, k=4, max_tokens=length, m=m, eos_policy="pass")
    events, _ = _rr(config, lambda prompt: "word")
    compute = next(e for e in events if e.kind == "compute_used")
    assert compute.decode_tokens <= m * length
    for j in range(m):
        answer = _answer(events, j)
        assert answer.finish_reason == "length" and answer.n_tokens == length // 2
        turns = [c.turn for c in _chunks(events, j)]
        assert turns == list(range(len(turns)))  # one chunk per turn, turn t by order[t % N]
        assert [c.agent for c in _chunks(events, j)] == [t % n for t in turns]


def test_end_policy_is_unchanged_when_the_writer_never_stops():
    events, _ = _rr(_config(n=3, c=1, k=3, max_tokens=10), lambda p: "w " * 50)
    assert [c.n_tokens for c in _chunks(events)] == [3, 3, 3, 1]
    assert _answer(events).finish_reason == "length"


# --- adversary strategies -------------------------------------------------------------------------
def _order_cases():
    for n, c, k, length, seed in itertools.product(
        (2, 3, 5, 7), (1, 2), (1, 3, 16), (16, 50, 128), range(3)
    ):
        if c <= n:
            yield n, c, k, length, seed


@pytest.mark.parametrize(("n", "c", "k", "length", "seed"), list(_order_cases()))
def test_last_word_seats_a_corrupted_agent_on_the_last_turn_and_keeps_a_permutation(
    n, c, k, length, seed
):
    config = _config(n=n, c=c, k=k, max_tokens=length)
    corrupted = tuple(random.Random(seed).sample(range(n), c))
    shuffled = tuple(random.Random(seed + 100).sample(range(n), n))
    order = get_strategy("last-word").order(shuffled, corrupted, config)
    assert sorted(order) == list(range(n))
    assert order[last_turn(config) % n] in corrupted
    moved = [i for i in range(n) if order[i] != shuffled[i]]
    assert len(moved) in (0, 2)  # at most one swap: the rest of the order stays as it was


def test_static_and_contextual_keep_the_order_and_no_corrupted_agent_changes_nothing():
    config = _config(n=5, c=0, k=3, max_tokens=12)
    order = (3, 1, 4, 0, 2)
    for name in ADVERSARIES:
        assert get_strategy(name).order(order, (), config) == order
    for name in ("static", "contextual"):
        assert get_strategy(name).order(order, (1,), config) == order
    assert tuple(STRATEGIES) == ADVERSARIES


def test_last_word_through_the_protocol_a_corrupted_agent_writes_the_last_turn():
    n, k, length = 5, 3, 20  # ceil(20 / 3) = 7 turns: turn 6 is the last
    config = _config(n=n, c=2, k=k, max_tokens=length, m=6, order="shuffled", adversary="last-word")
    events, _ = _rr(config, lambda p: "w " * 50)
    for j in range(6):
        started = next(e for e in events if e.kind == "trajectory_started" and e.trajectory == j)
        assert sorted(started.order) == list(range(n))
        chunks = _chunks(events, j)
        assert len(chunks) == 7 and chunks[-1].corrupted
        assert _answer(events, j).last_corrupted
    static = _rr(config.with_(adversary="static"), lambda p: "w " * 50)[0]
    assert not all(_chunks(static, j)[-1].corrupted for j in range(6))  # the strategy did it


def test_contextual_text_reaches_only_the_corrupted_agents_with_the_target_filled_in():
    config = _config(n=4, c=2, adversary="contextual")
    backend = FakeBackend("fake", obeys_injection)
    list(run_question(config, QUESTION, TASK, FakePool(backend), methods=("MAJ",)))
    prompts = [r.prompt for r in backend.calls[0]]
    text = CONTEXTUAL_TEXT.replace("{target}", "(C)")
    assert "argue against it" in text and "{target}" not in text
    assert [text in p for p in prompts] == [True, True, False, False]
    assert all("MUST select (C)" in p for p in prompts[:2])  # the strength's injection stays
    backend.calls.clear()
    list(run_question(config.with_(adversary="static"), QUESTION, TASK, FakePool(backend)))
    assert not any("argue against" in r.prompt for call in backend.calls for r in call)


def test_step_by_step_prompt_style_reaches_every_agent_and_direct_adds_nothing():
    backend = FakeBackend("fake", obeys_injection)
    list(run_question(_config(prompt_style="step-by-step"), QUESTION, TASK, FakePool(backend)))
    assert all(REASONING_CUE in r.prompt for call in backend.calls for r in call)
    backend.calls.clear()
    list(run_question(_config(), QUESTION, TASK, FakePool(backend)))
    assert not any(REASONING_CUE in r.prompt for call in backend.calls for r in call)


# --- config ---------------------------------------------------------------------------------------
def test_configs_logged_before_the_new_fields_keep_their_hash():
    header = json.loads((ROOT / "assets" / "experiment_small.jsonl").open().readline())
    for cond in header["conditions"]:
        config = RunConfig.from_dict(cond["config"])
        assert config.config_hash() == cond["config_hash"]
        assert config.to_dict() == cond["config"]


def test_new_fields_round_trip_and_change_the_hash():
    base = _config()
    hashes = {base.config_hash()}
    for change in (
        {"eos_policy": "pass"},
        {"prompt_style": "step-by-step"},
        {"adversary": "contextual"},
        {"adversary": "last-word"},
    ):
        config = base.with_(**change)
        assert RunConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
        hashes.add(config.config_hash())
    assert len(hashes) == 5


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("eos_policy", "stop", "unknown end-of-sequence policy 'stop'; allowed: end, pass"),
        ("prompt_style", "cot", "unknown prompt style 'cot'; allowed: direct, step-by-step"),
        ("adversary", "sly", "unknown adversary strategy 'sly'; allowed: static, contextual"),
    ],
)
def test_bad_settings_are_refused_with_the_allowed_values(field, value, message):
    with pytest.raises(RRError, match=message):
        _config(**{field: value})


# --- sweep and report -----------------------------------------------------------------------------
def test_sweep_crosses_adversaries_and_the_header_names_each():
    plain = normalize_sweep({"tasks": "demo", "configs": "1c2t", "n": 4})
    assert (plain["adversaries"], plain["eos_policy"], plain["prompt_style"]) == (
        ["static"],
        "end",
        "direct",
    )
    plan = plan_sweep(
        {
            "tasks": "demo",
            "configs": "1c2t",
            "n": 4,
            "strengths": "strong",
            "adversaries": "static,contextual,last-word",
            "eos_policy": "pass",
        }
    )
    assert [c.config.adversary for c in plan.conditions] == list(ADVERSARIES)
    assert {c.config.eos_policy for c in plan.conditions} == {"pass"}
    assert len({c.key for c in plan.conditions}) == 3
    assert [c.describe()["adversary"] for c in plan.conditions] == list(ADVERSARIES)
    with pytest.raises(RRError, match="unknown adversary strategy 'x'"):
        normalize_sweep({"adversaries": "static,x"})


def test_report_and_export_show_maj_and_rrmaj_per_strategy(tmp_path):
    from rrdemo.report.submission import SCHEMA_VERSION
    from rrdemo.report.submission_builder import build_submission
    from rrdemo.report.write import build_report
    from rrdemo.runs.log import read_run
    from tests.support.fakes import QUESTIONS

    task = FakeTask()
    task.name = "logic3"  # export needs a benchmark name
    conditions = []
    for adversary in ("static", "last-word"):
        for c in (0, 2, 3):
            config = RunConfig(
                agents=homogeneous_agents("fake", 3, c),
                k=3,
                m=3,
                max_tokens=12,
                sampling=Sampling(temperature=0.0, seed=1),
                adversary=adversary,
            )
            conditions.append(Condition(task, config, QUESTIONS))
    plan = Plan({"fake": True}, tuple(conditions))
    log = tmp_path / "run.jsonl"
    run_plan(plan, log, FakePool(FakeBackend("fake", obeys_injection)), progress=False)
    report = build_report(read_run(log))
    table = report.files["adversary_table.md"]
    lines = [line for line in table.splitlines() if "2c1t" in line]
    assert [line.split("|")[6].strip() for line in lines] == ["static", "last-word"]
    assert "## Adversary strategies" in report.files["report.md"]
    # The main table reads one strategy (static): one row, its cells from the static conditions.
    assert len(report.main_rows) == 1
    submission = build_submission(log, "tester")
    assert submission.schema_version == SCHEMA_VERSION
    assert sorted({r.adversary for r in submission.results}) == ["last-word", "static"]
    assert len(submission.results) == 6


# --- the CLI flags and the Arena control pass the settings through ---------------------------------
def test_run_flags_reach_the_config():
    from rrdemo.cli import build_parser
    from rrdemo.cli.run import _config

    flags = ["run", "--eos-policy", "pass", "--adversary", "last-word"]
    config, _ = _config(build_parser().parse_args([*flags, "--prompt-style", "step-by-step"]))
    assert (config.eos_policy, config.adversary, config.prompt_style) == (
        "pass",
        "last-word",
        "step-by-step",
    )
    plain, _ = _config(build_parser().parse_args(["run"]))
    assert (plain.eos_policy, plain.adversary, plain.prompt_style) == ("end", "static", "direct")


def test_arena_request_carries_the_eos_policy_and_refuses_a_bad_one():
    from ui.state import ArenaRequest, build_config

    assert build_config(ArenaRequest()).eos_policy == "end"
    assert build_config(ArenaRequest(eos_policy="pass")).eos_policy == "pass"
    with pytest.raises(RRError, match="unknown end-of-sequence policy 'x'; allowed: end, pass"):
        build_config(ArenaRequest(eos_policy="x"))
