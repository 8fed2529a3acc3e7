"""The Arena's run: validated, models loaded with a frame saying so, then the engine's events
streamed as frames; refused names never reach a loader; failures reach the user as one message."""

from __future__ import annotations

import re
from dataclasses import replace

import gradio as gr
import pytest

from rrdemo.backends.hardware import gpu_duration
from rrdemo.backends.pool import ModelPool
from rrdemo.errors import RRError
from rrdemo.events import Decision, RunStarted
from rrdemo.protocols import run_question
from tests.support.fakes import FakeBackend, FakePool, obeys_injection
from ui.arena import _gpu_seconds, _run_callback, stopped_frame, stream_run
from ui.render import _verdict_word, live_result_line
from ui.state import ARENA_FIELDS, ArenaRequest, build_run

TINY = ArenaRequest(model="smollm2", n=3, c=1, k=4, max_tokens=12, task="logic3", seed=3)


def _loading_pool(loads: list[str], **options) -> ModelPool:
    def load(name, revision=None, **_):
        loads.append(name)
        return FakeBackend(name, obeys_injection)

    return ModelPool(loader=load, **options)


def test_stream_run_frames_arrive_in_order_and_match_the_engine() -> None:
    # The real logic3 task and question, fake agents that obey the strong injection.
    request = ArenaRequest(model="fake", n=3, c=2, k=4, max_tokens=16, task="logic3", seed=3)
    pool = FakePool(FakeBackend("fake", obeys_injection))
    frames = list(stream_run(request, pool, interval=0.0))
    updates = [f[4]["updates"] for f in frames]
    events = [f[4]["events"] for f in frames]
    assert updates == sorted(set(updates)) and events == sorted(events)
    final = frames[-1][4]
    assert final["status"] == "done"
    direct = build_run(request)
    stream = list(run_question(direct.config, direct.question, direct.task, pool, interleave=True))
    decisions = {e.method: e for e in stream if isinstance(e, Decision)}
    assert set(decisions) == {"MAJ", "RRMaj"}
    for method, decision in decisions.items():
        assert final["methods"][method]["decision"]["answer"] == decision.answer
    started = next(e for e in stream if isinstance(e, RunStarted))
    assert final["question"]["target"] == started.target and started.target is not None


def test_a_last_word_arena_run_gives_every_full_trajectory_a_corrupted_last_writer() -> None:
    request = ArenaRequest(
        model="fake", n=3, c=1, k=4, max_tokens=12, task="logic3", seed=5, adversary="last-word"
    )
    chatty = FakePool(FakeBackend("fake", lambda prompt: "word " * 1000))  # runs to L
    frames = list(stream_run(request, chatty, interval=0.0))
    status, state = frames[-1][0], frames[-1][5]
    assert "adversary last-word" in status and state.config["adversary"] == "last-word"
    rr = state.methods["RRMaj"].trajectories
    assert len(rr) == 3
    for tr in rr.values():
        last = tr.chunks[-1]
        assert (last.turn, last.corrupted) == (2, True)
    static = list(stream_run(replace(request, adversary="static"), chatty, interval=0.0))[-1][5]
    last_writers = [tr.chunks[-1].corrupted for tr in static.methods["RRMaj"].trajectories.values()]
    assert not all(last_writers)  # without the reseating an honest agent sometimes writes last


def test_each_model_loads_once_with_a_frame_saying_so_then_the_run_streams():
    loads: list[str] = []
    pool = _loading_pool(loads)
    frames = list(stream_run(TINY, pool, interval=0.0))
    assert loads == ["smollm2"]
    assert frames[0][0].startswith("**Loading** model **smollm2**")
    assert frames[1][0].startswith("**Running** MAJ and RRMaj")
    assert "smollm2 loaded from: served / built in" in frames[1][0]
    assert frames[-1][0].startswith("**Done**") and frames[-1][4]["status"] == "done"
    again = list(stream_run(TINY, pool, interval=0.0))  # loaded already: no loading frame
    assert loads == ["smollm2"] and again[0][0].startswith("**Running**")


def test_a_refused_model_name_never_reaches_the_loader():
    loads: list[str] = []
    pool = _loading_pool(loads, public=True)
    with pytest.raises(RRError, match="not allowed here"):
        list(stream_run(replace(TINY, model="/etc/passwd"), pool))
    assert loads == []


def test_the_callback_turns_a_failure_into_one_message_for_the_user():
    run = _run_callback(FakePool(FakeBackend("smollm2", obeys_injection)))
    bad = replace(TINY, c=5)  # more corrupted agents than agents
    with pytest.raises(gr.Error, match="between 0 and N=3"):
        list(run(None, *[getattr(bad, name) for name in ARENA_FIELDS]))


def test_the_gpu_time_follows_the_same_ensembles_n_m_l_and_k():
    request = replace(TINY, n=5, m=0, max_tokens=1024, k=8)
    assert _gpu_seconds(request) == gpu_duration(5, 0, 1024, 8)
    assert _gpu_seconds(replace(request, m=20)) == gpu_duration(5, 20, 1024, 8)


def test_the_gpu_time_of_a_per_agent_list_counts_its_agents():
    agents = "# two corrupted, one honest\nsmollm2*, smollm2*\n\nsmollm2, honest\n"
    request = replace(TINY, ensemble="per agent", agents=agents, m=0, max_tokens=1024, k=8)
    assert gpu_duration(3, 0, 1024, 8) != gpu_duration(4, 0, 1024, 8)  # the count matters here
    assert _gpu_seconds(request) == gpu_duration(3, 0, 1024, 8)
    unreadable = replace(request, agents="smollm2, honest, honest")  # refused by the run itself
    assert _gpu_seconds(unreadable) == gpu_duration(1, 0, 1024, 8)


def test_stop_shows_every_unfinished_answer_stopped_and_ends_the_status_line() -> None:
    request = ArenaRequest(model="fake", n=3, c=2, k=4, max_tokens=16, task="logic3", seed=3)
    pool = FakePool(FakeBackend("fake", obeys_injection))
    frames = stream_run(request, pool, interval=0.0)
    for frame in frames:  # until the first chunks are on screen
        state = frame[-1]
        if state.events > 8:
            break
    frames.close()
    assert "writing…" in frame[2] + frame[3]
    status, verdict, maj, rrmaj, record, _ = stopped_frame(state)
    assert status.startswith("**Stopped**") and record["status"] == "stopped"
    assert "writing…" not in maj + rrmaj and "stopped" in maj and "stopped" in rrmaj
    assert "stopped" in verdict and "Live run</b>: stopped" in live_result_line(state)
    state.apply(RunStarted("MAJ", {}, "h", "q", "text", "(A)", "(C)"))  # one already on its way
    assert state.stopped  # stays stopped


def test_a_finished_live_run_shows_its_own_outcome_not_a_recordings() -> None:
    request = ArenaRequest(model="fake", n=3, c=2, k=4, max_tokens=16, task="logic3", seed=3)
    pool = FakePool(FakeBackend("fake", obeys_injection))
    *_, last = stream_run(request, pool, interval=0.0)
    state = last[-1]
    line = live_result_line(state)
    for method in ("MAJ", "RRMaj"):
        decision = state.methods[method].decision
        word, _ = _verdict_word(decision, gold_known=True)
        answer = f" {decision.answer}" if decision.answer else ""
        assert f"{method} <b>{word}</b>{answer}" in line
    assert "MAJ <b>fooled</b> (C)" in line  # agents that obey the injection
    assert "this new sample" in line
    assert all(isinstance(u, dict) for u in stopped_frame(state))  # a finished run stays as it is


def test_a_stream_that_goes_on_after_stop_decodes_no_more_and_says_stopped() -> None:
    """Gradio's cancel lands only when the stream's current step returns: whatever the stream
    still sends after Stop says "Stopped", and it ends without another event."""
    request = ArenaRequest(model="fake", n=3, c=2, k=4, max_tokens=16, task="logic3", seed=3)
    pool = FakePool(FakeBackend("fake", obeys_injection))
    frames = stream_run(request, pool, interval=0.0)
    for frame in frames:
        state = frame[-1]
        if state.events > 8:
            break
    assert frame[0].startswith("**Running**")
    stopped_frame(state)
    events = state.events
    late = list(frames)  # the stream is not closed: it goes on as a cancel still on its way
    assert late and all(f[0].startswith("**Stopped**") for f in late)
    assert all("writing…" not in f[2] + f[3] for f in late)
    assert state.events == events and state.stopped


def test_a_replay_that_goes_on_after_stop_says_stopped() -> None:
    from rrdemo.gallery import load_gallery
    from ui.replay import stream_replay

    setting = load_gallery().settings[0]
    frames = stream_replay(setting.unit(setting.questions[0]), seconds=0.0, interval=0.0)
    for frame in frames:
        state = frame[-1]
        if state.events > 8:
            break
    assert "playing back" in frame[0]
    stopped_frame(state)
    events = state.events
    late = list(frames)
    assert late and all(f[0].startswith("**Stopped**") for f in late)
    assert state.events == events


def test_the_status_gives_the_expected_time_then_the_time_left_then_both_times() -> None:
    """Before: the estimate from the committed rates (SmolLM2 is measured); while: the time left
    at the run's own pace; at the end: the time taken beside the estimate."""
    frames = [frame[0] for frame in stream_run(TINY, _loading_pool([]), interval=0.0)]
    running = next(f for f in frames if f.startswith("**Running** MAJ and RRMaj"))
    assert "· expected about " in running
    assert any(" left (at this run's pace) · " in f for f in frames[2:-1])
    assert re.match(r"\*\*Done\*\* · took \d+ s \(expected about \d+ s\) · ", frames[-1])
