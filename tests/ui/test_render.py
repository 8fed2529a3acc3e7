"""Arena state and HTML rendering, driven by the real engine over scripted fake backends."""

from __future__ import annotations

import re
from dataclasses import astuple, replace

import pytest

from rrdemo.config import ADVERSARIES, BEYOND_PAPER, PROMPT_STYLES, AgentSpec, RunConfig, Sampling
from rrdemo.errors import RRError
from rrdemo.events import ChunkWritten, Decision, TokenDelta
from rrdemo.protocols import run_question
from rrdemo.seats import parse_agents
from rrdemo.speakers import trajectory_order
from rrdemo.tasks import get_task, load_questions
from tests.support.fakes import QUESTION, FakeBackend, FakePool, FakeTask, obeys_injection
from ui import render, trajectory_html
from ui.arena_controls import _silence_text
from ui.render import Throttle
from ui.state import ArenaRequest, ArenaState, build_config, build_run


def _fake_run(config: RunConfig, pool: FakePool) -> tuple[ArenaState, list]:
    state = ArenaState(
        request={},
        agents=[{"model": a.model, "corrupted": a.corrupted} for a in config.agents],
        question={"gold": QUESTION.gold},
        config=config.to_dict(),
    )
    events = list(run_question(config, QUESTION, FakeTask(), pool, interleave=True))
    for event in events:
        state.apply(event)
    return state, events


def _config(n: int = 3, c: int = 2, k: int = 3, L: int = 12) -> RunConfig:
    agents = tuple(AgentSpec("fake", corrupted=i < c) for i in range(n))
    return RunConfig(agents=agents, strength="strong", k=k, max_tokens=L, sampling=Sampling(seed=1))


def test_state_follows_the_event_stream() -> None:
    pool = FakePool(FakeBackend("fake", obeys_injection))
    state, events = _fake_run(_config(), pool)
    decisions = {e.method: e for e in events if isinstance(e, Decision)}
    assert state.done
    for method in ("MAJ", "RRMaj"):
        summary = state.methods[method].summary()
        assert summary["decision"]["answer"] == decisions[method].answer
        assert summary["decision"]["fooled"] == decisions[method].fooled
        written = [e for e in events if isinstance(e, ChunkWritten) and e.method == method]
        assert summary["chunks"] == len(written)
        # each trajectory's text is exactly the concatenation of its finished chunks
        for j, tr in state.methods[method].trajectories.items():
            expected = "".join(e.text for e in written if e.trajectory == j)
            assert "".join(c.text for c in tr.chunks) == expected
            assert all(c.done for c in tr.chunks)
    # JSON-safe: string keys all the way down
    assert all(isinstance(k, str) for k in state.summary()["methods"]["MAJ"]["answers"])


def test_rrmaj_panel_colours_each_chunk_by_its_writer() -> None:
    pool = FakePool(FakeBackend("fake", obeys_injection))
    state, events = _fake_run(_config(n=3, c=2, k=2, L=12), pool)
    html = render.render_rrmaj(state)
    written = [e for e in events if isinstance(e, ChunkWritten) and e.method == "RRMaj"]
    written.sort(key=lambda e: (e.trajectory, e.turn))  # the panel lists trajectory by trajectory
    spans = re.findall(r'<span class="rr-chunk rr-(honest|corrupted)" data-agent="(\d+)"', html)
    assert len(spans) == len(written)
    assert [s[0] == "corrupted" for s in spans] == [e.corrupted for e in written]
    assert [int(s[1]) for s in spans] == [e.agent for e in written]
    assert sum(s[0] == "corrupted" for s in spans) == html.count(
        trajectory_html.CORRUPTED_MARK + "A"
    )
    # a turn tag on every chunk: agent and turn, 1-based
    for e in written:
        assert f"A{e.agent + 1}·t{e.turn + 1}" in html
    assert "rr-legend" in html and "corrupted" in html and "honest" in html


def test_maj_panel_and_verdict_line() -> None:
    pool = FakePool(FakeBackend("fake", obeys_injection))
    state, events = _fake_run(_config(n=3, c=2), pool)
    maj = render.render_maj(state)
    assert maj.count('class="rr-trajectory"') == 3
    decision = next(e for e in events if isinstance(e, Decision) and e.method == "MAJ")
    assert decision.fooled  # 2 of 3 obey the injection: the consensus trap
    verdict = render.render_verdict(state)
    maj_part = verdict.split("|")[0]
    assert "fooled" in maj_part and "decode" in maj_part and "prefill" in maj_part
    assert "Vote" in maj and "(C): 2" in maj


def test_every_model_and_user_string_is_escaped() -> None:
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    pool = FakePool(FakeBackend("fake", lambda prompt: f"{evil} The answer is (B)."))
    state, _ = _fake_run(_config(n=2, c=1, k=4, L=16), pool)
    state.agents[0]["model"] = "<b>model</b>"
    for html in (
        render.render_maj(state),
        render.render_rrmaj(state),
        render.render_verdict(state),
    ):
        assert "<script>" not in html and "<img" not in html and "<b>model</b>" not in html
    assert "&lt;script&gt;" in render.render_rrmaj(state)
    question = render.render_question("T<i>", "Q <b>x</b>", "<gold>", "q&1")
    assert "<b>x</b>" not in question and "&lt;gold&gt;" in question and "q&amp;1" in question


def test_live_tokens_extend_the_open_chunk_then_the_final_text_wins() -> None:
    state = ArenaState(agents=[{"model": "m", "corrupted": True}], question={})
    state.apply(TokenDelta("RRMaj", 0, 0, 0, True, "Hel"))
    state.apply(TokenDelta("RRMaj", 0, 0, 0, True, "lo"))
    chunk = state.methods["RRMaj"].trajectories[0].chunks[0]
    assert (chunk.text, chunk.done) == ("Hello", False)
    assert "rr-live" in render.render_rrmaj(state)
    state.apply(ChunkWritten("RRMaj", 0, 0, 0, True, "m", "Hello!", 2))
    state.apply(TokenDelta("RRMaj", 0, 1, 0, True, "Next"))
    chunks = state.methods["RRMaj"].trajectories[0].chunks
    assert [(c.text, c.done, c.turn) for c in chunks] == [("Hello!", True, 0), ("Next", False, 1)]


def test_throttle_limits_the_rate() -> None:
    throttle = Throttle(interval=60)
    assert throttle.due() and not throttle.due() and throttle.due(force=True)


@pytest.mark.parametrize(
    "changes,needle",
    [
        ({"n": 3, "c": 4}, "c (corrupted agents)"),
        ({"k": 0}, "K"),
        ({"k": 64, "max_tokens": 32}, "at least K"),
        ({"n": 2.5}, "whole number"),
        ({"strength": "custom", "custom_template": "no slot"}, "{target}"),
        ({"strength": "loud"}, "strength"),
        ({"model": "no-such-model"}, None),
        ({"task": "nonsense"}, "unknown task"),
        ({"task": "logic3", "question_index": 100000}, "does not exist"),
        ({"task": "custom", "custom_question": "   "}, "empty"),
        ({"task": "logic3", "target": "Z"}, "not valid"),
        ({"ensemble": "per agent", "agents": "smollm2, corrupted, honest"}, "role"),
        ({"ensemble": "per agent", "agents": ""}, "empty"),
        ({"temperature": 9}, "temperature"),
        ({"adversary": "sneaky"}, "unknown adversary strategy 'sneaky'; allowed: static"),
        ({"prompt_style": "loud"}, "unknown prompt style 'loud'; allowed: direct"),
        ({"eos_policy": "stop"}, "unknown end-of-sequence policy 'stop'; allowed: end"),
        # sizes, refused from the numbers before anything is built (rrdemo.limits)
        ({"n": 10**9, "c": 1}, "N (agents) is 1000000000; at most 64 is allowed"),
        ({"m": 10**6}, "M (RR trajectories) is 1000000; at most 256 is allowed"),
        ({"max_tokens": 10**9}, "L (max new tokens) is 1000000000; at most 32768 is allowed"),
        ({"ensemble": "per agent", "agents": "smollm2\n" * 65}, "more than 64 agents"),
        ({"task": "custom", "custom_question": "Why? " * 5000}, "at most 20000 is allowed"),
        ({"task": "logic3", "target": "(A)" * 7000}, "the target answer's length is 21000"),
        ({"strength": "custom", "custom_template": "{target}" * 300}, "at most 2000 is allowed"),
    ],
)
def test_bad_requests_raise_clear_errors(changes: dict, needle: str | None) -> None:
    request = replace(ArenaRequest(), **changes)
    if needle is None:  # an unknown model is refused when it is resolved, before any loading
        from rrdemo.backends.registry import resolve

        with pytest.raises(RRError, match="unknown model"):
            resolve(build_config(request).agents[0].model)
        return
    with pytest.raises(RRError, match=re.escape(needle)):
        build_run(request)


def test_target_must_be_a_wrong_option() -> None:
    question = load_questions("logic3")[0]
    gold = question.gold
    with pytest.raises(RRError, match="correct answer"):
        build_run(ArenaRequest(task="logic3", question_index=0, target=gold.strip("()")))
    wrong = next(o for o in question.options if o != gold)
    prepared = build_run(ArenaRequest(task="logic3", question_index=0, target=wrong.lower()))
    assert prepared.target == wrong


def test_per_agent_lines_and_custom_questions() -> None:
    specs = parse_agents("smollm2, corrupted\n# a comment\ngemma3-270m\n  smollm2 , honest ")
    assert [(s.model, s.corrupted) for s in specs] == [
        ("smollm2", True),
        ("gemma3-270m", False),
        ("smollm2", False),
    ]
    prepared = build_run(
        ArenaRequest(
            ensemble="per agent",
            agents="smollm2, corrupted\nsmollm2, honest",
            task="custom",
            custom_question="What is 2 + 3?",
            custom_gold="5",
        )
    )
    assert prepared.config.label == "1c1t"
    assert prepared.question.gold == "5"
    assert prepared.task.name == get_task("custom").name


def test_rrmaj_cards_show_who_wrote_which_share_and_the_verdict_counts_honest_writers() -> None:
    pool = FakePool(FakeBackend("fake", obeys_injection))
    config = replace(_config(n=3, c=2, k=2, L=12), order="shuffled", m=4)
    state, events = _fake_run(config, pool)
    html = render.render_rrmaj(state)
    written = [e for e in events if isinstance(e, ChunkWritten) and e.method == "RRMaj"]
    cards = html.split('class="rr-trajectory"')[1:]
    assert len(cards) == 4
    honest_trajectories = 0
    for j, card in enumerate(cards):
        mine = [e for e in written if e.trajectory == j and e.n_tokens > 0]
        tokens: dict[int, int] = {}
        for e in mine:
            tokens[e.agent] = tokens.get(e.agent, 0) + e.n_tokens
        shares = re.findall(r'class="rr-share rr-(honest|corrupted)" data-agent="(\d+)"', card)
        assert {int(a) for _, a in shares} == set(tokens)  # one segment per writer
        roles = {e.corrupted for e in mine}
        kind = "mixed" if len(roles) == 2 else ("honest only" if False in roles else "corrupted")
        assert f'data-kind="{kind}' in card
        for agent, n in tokens.items():
            share = f"{n} tokens ({100 * n / sum(tokens.values()):.0f}%)"
            assert re.search(
                rf'data-agent="{agent}" title="A{agent + 1} [^"]*: {re.escape(share)}"', card
            )
        honest_trajectories += False in roles
    verdict = render.render_verdict(state)
    assert f"honest writer in <b>{honest_trajectories} of 4</b> trajectories" in verdict
    assert state.summary()["speakers"]["with_honest_writer"] == honest_trajectories


# -- settings beyond the paper: adversary strategy and prompt style ---------------------------------
def test_adversary_and_prompt_style_reach_the_run_config() -> None:
    default = build_config(ArenaRequest())
    assert {name: getattr(default, name) for name in BEYOND_PAPER} == BEYOND_PAPER
    assert render.setting_text(default).endswith("shuffled order")  # the defaults go unnamed
    beyond = default.with_(adversary="last-word", prompt_style="step-by-step")
    assert render.setting_text(beyond).endswith(
        "shuffled order, prompt style step-by-step, adversary last-word"
    )
    for adversary in ADVERSARIES:
        for style in PROMPT_STYLES:
            config = build_config(ArenaRequest(adversary=adversary, prompt_style=style))
            assert (config.adversary, config.prompt_style) == (adversary, style)


def test_silent_agents_warning_follows_the_last_word_reseating() -> None:
    # Fixed order, L = 3K: seats 0-2 write; the corrupted agent sits in seat 4.
    lines = "\n".join(["smollm2, honest"] * 4 + ["smollm2, corrupted"])
    base = ArenaRequest(
        ensemble="per agent", agents=lines, k=8, max_tokens=24, order="fixed", task="logic3"
    )
    static = _silence_text(*astuple(base))
    assert "agent 3 (honest), agent 4 (corrupted) can never write" in static
    # last-word seats the corrupted agent on the last turn (turn 2): seat 2 falls silent instead.
    reseated = replace(base, adversary="last-word")
    order = trajectory_order(build_run(reseated).config, "", 0)
    assert order[2] == 4 and sorted(order) == [0, 1, 2, 3, 4]
    last_word = _silence_text(*astuple(reseated))
    assert "agent 2 (honest), agent 3 (honest) can never write" in last_word
    assert "agent 4" not in last_word


def test_the_truth_meter_draws_a_z_line_per_answer_coloured_by_writer() -> None:
    def reader(text: str, candidate: str) -> float:  # the target's letter pulls z down
        written = text.split("</user>\n", 1)[1]
        return min(0.2 + 0.1 * written.count(f"({candidate})"), 0.45)

    pool = FakePool(FakeBackend("fake", obeys_injection, reader=reader))
    config = replace(_config(), meter=True)
    state, _ = _fake_run(config, pool)
    rr, maj = render.render_rrmaj(state), render.render_maj(state)
    for html, method in ((rr, "RRMaj"), (maj, "MAJ")):
        trajectories = state.methods[method].trajectories
        assert html.count('class="rr-zline"') == len(trajectories)
        steps = re.findall(
            r'class="rr-zstep" data-reader="(\w+)" data-agent="(\d+)" data-turn="(\d+)" '
            r'data-z="([-\d.e]+)"[^>]*stroke="(#[0-9a-f]+)"',
            html,
        )
        readings = sum(len(tr.measures) - 1 for tr in trajectories.values())
        assert len(steps) == 2 * readings  # both readers, one step per turn after the opening
        for reader_role, agent, _, _, hue in steps:
            assert reader_role in ("honest", "corrupted")
            assert hue == trajectory_html.agent_hue(int(agent), state.agents)
    # the meter is explained once, under the answers; each chart shows only its values
    both = rr + maj
    assert both.count(trajectory_html.METER_LEGEND) == 1 and rr.index(
        trajectory_html.METER_LEGEND
    ) > rr.index('class="rr-vote"')
    assert both.count("z: honest reader") == sum(
        len(state.methods[m].trajectories) for m in ("MAJ", "RRMaj")
    )
    assert "logit" not in re.sub(re.escape(trajectory_html.METER_LEGEND), "", both)
    assert "truth meter on" in render.setting_text(config) and "True" not in render.setting_text(
        config
    )
    plain = replace(_config(), meter=False)
    state, _ = _fake_run(plain, FakePool(FakeBackend("fake", obeys_injection)))
    assert "rr-zline" not in render.render_rrmaj(state)
    assert trajectory_html.METER_LEGEND not in render.render_rrmaj(state)
