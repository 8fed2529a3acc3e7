"""Who can write (silent agents, before a run) and who did write (the fold over ChunkWritten)."""

from __future__ import annotations

import json

import pytest

from rrdemo.cli import build_parser, main
from rrdemo.cli.run import _config as cli_config
from rrdemo.cli.run import speaker_summary
from rrdemo.config import ADVERSARIES, RunConfig, Sampling
from rrdemo.defaults import EXPERIMENT_DEFAULTS, INTERACTIVE_DEFAULTS
from rrdemo.events import ChunkWritten, TrajectoryStarted
from rrdemo.fold import SpeakerTally, fold
from rrdemo.protocols import run_question
from rrdemo.runs.spec import normalize_sweep, plan_sweep
from rrdemo.runs.sweep import DEFAULTS
from rrdemo.seats import homogeneous_agents
from rrdemo.speakers import (
    possible_writers,
    silence_warning,
    silent_agents,
    speaking_order,
    trajectory_order,
)
from tests.support.fakes import QUESTION, FakeBackend, FakePool, FakeTask
from ui.state import ArenaRequest, build_config

TASK = FakeTask()


def _rr_config(n=5, c=3, k=100, length=256, order="fixed", m=None, seed=0) -> RunConfig:
    return RunConfig(
        agents=homogeneous_agents("chatty", n, c),
        k=k,
        max_tokens=length,
        order=order,
        m=m,
        sampling=Sampling(temperature=0.0, seed=seed),
    )


def _chatty_pool() -> FakePool:
    """Agents that never stop on their own: every trajectory runs to L."""
    return FakePool(FakeBackend("chatty", lambda prompt: "word " * 10_000))


# -- who can write ----------------------------------------------------------------------------
def test_fixed_order_with_l_below_n_times_k_silences_the_last_seats():
    config = _rr_config(k=100, length=256)  # the old Arena default: 3 turns, corrupted seats 0-2
    silence = silent_agents(config)
    assert silence.turns == 3
    assert silence.silent == (3, 4)
    assert silence.corrupted_only == silence.trajectories == 5
    text = silence_warning(config)
    assert "agent 3 (honest), agent 4 (honest) can never write" in text
    assert "only corrupted agents can write" in text and "N x K = 500" in text
    assert "--order shuffled" in text


def test_everyone_can_write_when_l_is_at_least_n_times_k():
    for order in ("fixed", "shuffled"):
        config = _rr_config(k=50, length=250, order=order)
        assert silent_agents(config, [QUESTION.qid]).silent == ()
        assert silence_warning(config, [QUESTION.qid]) is None


@pytest.mark.parametrize("adversary", ADVERSARIES)
def test_shuffled_silence_comes_from_the_orders_the_protocol_uses(adversary):
    # L = 2K: two writers per trajectory. The fold over a real (fake-model) run must find exactly
    # the writers `possible_writers` predicts from `trajectory_order` (the adversary's reseating
    # included), trajectory by trajectory.
    config = _rr_config(n=5, c=1, k=4, length=8, order="shuffled", m=6, seed=11)
    config = config.with_(adversary=adversary)
    events = list(run_question(config, QUESTION, TASK, _chatty_pool(), methods=("RRMaj",)))
    started = {e.trajectory: e.order for e in events if isinstance(e, TrajectoryStarted)}
    tally = fold(events).speakers
    for j in range(6):
        order = trajectory_order(config, QUESTION.qid, j)
        assert started[j] == order
        assert set(tally.trajectories[j].tokens) == set(possible_writers(config, order))
        assert sorted(order) == sorted(speaking_order(config, QUESTION.qid, j))
        if adversary == "last-word":  # the corrupted agent (seat 0) writes turn 1, the last
            assert order[1] == 0 and tally.trajectories[j].corrupted[0]
    wrote = {a for tr in tally.trajectories.values() for a in tr.tokens}
    silence = silent_agents(config, [QUESTION.qid])
    assert set(silence.silent) == set(range(5)) - wrote
    corrupted_only = sum(not tr.honest_wrote for tr in tally.trajectories.values())
    assert silence.corrupted_only == corrupted_only


def test_shuffled_warning_names_agents_silent_in_every_trajectory():
    config = _rr_config(n=5, c=3, k=10, length=10, order="shuffled", m=1, seed=2)
    order = speaking_order(config, QUESTION.qid, 0)
    text = silence_warning(config, [QUESTION.qid])
    silent = sorted(order[1:])
    assert silent_agents(config, [QUESTION.qid]).silent == tuple(silent)
    assert f"agent {silent[0]} (" in text and "--order shuffled" not in text


# -- who did write ----------------------------------------------------------------------------
def _chunk(trajectory, agent, corrupted, n_tokens, method="RRMaj"):
    return ChunkWritten(method, trajectory, 0, agent, corrupted, "m", "x", n_tokens)


def test_fold_counts_tokens_per_agent_and_role_and_mixed_trajectories():
    events = [
        _chunk(0, 2, True, 6),
        _chunk(0, 4, False, 2),
        _chunk(0, 2, True, 0),  # an empty chunk (EOS at once) adds nothing
        _chunk(1, 0, True, 5),
        _chunk(1, 3, False, 0),  # wrote no token: not a writer
        _chunk(2, 3, False, 7),
        _chunk(0, 1, True, 99, method="MAJ"),  # MAJ answers are not RR trajectories
    ]
    tally = fold(events).speakers
    assert sorted(tally.trajectories) == [0, 1, 2]
    t0 = tally.trajectories[0]
    assert t0.tokens == {2: 6, 4: 2} and t0.mixed
    assert (t0.honest_tokens, t0.corrupted_tokens) == (2, 6) and t0.share(2) == 0.75
    assert not tally.trajectories[1].mixed and not tally.trajectories[1].honest_wrote
    assert tally.trajectories[2].honest_wrote and not tally.trajectories[2].mixed
    assert (tally.with_honest, tally.mixed, tally.honest_only, tally.corrupted_only) == (2, 1, 1, 1)
    assert tally.headline() == (
        "2 of 3 RR trajectories had an honest writer (1 mixed, 1 honest only, 1 corrupted only)"
    )
    record = json.loads(json.dumps(tally.to_dict()))
    assert record["kind"] == "speaker_summary" and record["mixed"] == 1
    assert record["per_trajectory"][0]["tokens"] == {"2": 6, "4": 2}


def test_cli_speaker_summary_lists_each_trajectorys_writers():
    tally = SpeakerTally()
    for event in (_chunk(0, 2, True, 6), _chunk(0, 4, False, 2), _chunk(1, 3, False, 7)):
        tally.add(event)
    text = speaker_summary(tally, _rr_config())
    lines = text.splitlines()
    assert lines[0] == f"=== RRMaj speakers: {tally.headline()}"
    assert lines[1] == "    #0 mixed: agent 2 (corrupted) 6 tok 75%, agent 4 (honest) 2 tok 25%"
    assert lines[2] == "    #1 honest only: agent 3 (honest) 7 tok 100%"


# -- defaults come from one place -------------------------------------------------------------
def test_defaults_derive_from_the_config_and_let_everyone_speak():
    assert EXPERIMENT_DEFAULTS.order == INTERACTIVE_DEFAULTS.order == "shuffled"
    assert (EXPERIMENT_DEFAULTS.k, EXPERIMENT_DEFAULTS.max_tokens) == (100, 512)
    assert (
        DEFAULTS["k"] == [EXPERIMENT_DEFAULTS.k] and DEFAULTS["order"] == EXPERIMENT_DEFAULTS.order
    )
    assert DEFAULTS["max_tokens"] == EXPERIMENT_DEFAULTS.max_tokens >= 5 * EXPERIMENT_DEFAULTS.k
    arena = build_config(ArenaRequest(model="smollm2"))
    assert (arena.k, arena.max_tokens, arena.order) == (
        INTERACTIVE_DEFAULTS.k,
        INTERACTIVE_DEFAULTS.max_tokens,
        "shuffled",
    )
    assert arena.max_tokens >= arena.n * arena.k
    args = build_parser().parse_args(["run", "--question", "q (A) x (B) y"])
    cli, _ = cli_config(args)
    assert (cli.k, cli.max_tokens, cli.order) == (arena.k, arena.max_tokens, arena.order)
    assert cli.sampling == Sampling(
        INTERACTIVE_DEFAULTS.temperature, INTERACTIVE_DEFAULTS.top_p, INTERACTIVE_DEFAULTS.seed
    )
    fixed, _ = cli_config(build_parser().parse_args(["run", "--question", "q", "--order", "fixed"]))
    assert fixed.order == "fixed"


def test_an_explicit_flag_beats_the_ensemble_file_and_a_missing_one_does_not(tmp_path):
    path = tmp_path / "ens.yaml"
    path.write_text(
        "run: {k: 32, max_tokens: 400, order: fixed, sampling: {temperature: 0.3, seed: 5}}\n"
        "agents:\n  - {model: smollm2, corrupted: true}\n  - {model: smollm2, count: 2}\n"
    )
    base = ["run", "--question", "q", "--ensemble", str(path)]
    config, _ = cli_config(build_parser().parse_args(base))
    assert (config.k, config.max_tokens, config.order) == (32, 400, "fixed")
    assert (config.sampling.temperature, config.sampling.seed) == (0.3, 5)
    flags = ["--k", "100", "--order", "shuffled", "--seed", "0"]
    config, _ = cli_config(build_parser().parse_args([*base, *flags]))
    assert (config.k, config.max_tokens, config.order) == (100, 400, "shuffled")
    assert (config.sampling.temperature, config.sampling.seed) == (0.3, 0)


def test_cli_warns_naming_silent_agents_before_loading_anything(capsys):
    argv = ["run", "--question", "Which? (A) x (B) y", "--models", "nosuch-model"]
    code = main([*argv, "--order", "fixed", "--k", "100", "--max-tokens", "256"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2  # the unknown model still fails, after the warning
    assert err[0].startswith("warning: agent 3 (honest), agent 4 (honest) can never write")
    main(argv)  # the defaults: nobody is silent
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown model" in err[0]


@pytest.mark.parametrize(("length", "warned"), [(256, True), (512, False)])
def test_experiment_planner_warns_when_agents_can_never_write(length, warned):
    raw = {"tasks": "logic3", "configs": "3c2t", "strengths": "strong", "n": 2}
    plan = plan_sweep({**raw, "order": "fixed", "k": 100, "max_tokens": length})
    assert bool(plan.warnings) == warned
    if warned:
        assert "logic3 smollm2 3c2t K=100: agent 3 (honest), agent 4 (honest)" in plan.warnings[0]
    assert normalize_sweep({})["order"] == "shuffled"


@pytest.mark.slow
def test_honest_agents_write_in_a_real_shuffled_round_robin(real_pool):
    """SmolLM2, 3 agents (2 corrupted), K = 3, L = N x K: honest agents really take turns."""
    from rrdemo.tasks import get_task, load_questions

    task = get_task("logic3")
    question = load_questions(task, n=1, seed=0)[0]
    config = RunConfig(
        agents=homogeneous_agents("smollm2", 3, 2),
        k=3,
        max_tokens=9,
        m=3,
        sampling=Sampling(temperature=0.0, seed=0),
    )
    assert config.order == "shuffled" and silence_warning(config, [question.qid]) is None
    events = list(run_question(config, question, task, real_pool, methods=("RRMaj",)))
    tally = fold(events).speakers
    written = [e for e in events if isinstance(e, ChunkWritten) and e.n_tokens > 0]
    honest = {e.agent for e in written if not e.corrupted}
    assert honest and honest <= {2}  # agent 2 is the one honest seat
    assert tally.with_honest == len({e.trajectory for e in written if not e.corrupted}) >= 1
    assert tally.mixed >= 1  # an honest and a corrupted agent shared a trajectory
    assert sum(tr.total for tr in tally.trajectories.values()) == sum(e.n_tokens for e in written)
