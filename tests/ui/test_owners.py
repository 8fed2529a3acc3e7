"""One stream owns a visitor's panels: a run started while a recording plays takes them, the
recording sends nothing more, a superseded live run stops decoding, and other sessions and
calls outside a session are untouched."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from rrdemo.gallery import load_gallery
from tests.support.fakes import FakeBackend, FakePool, obeys_injection
from ui import owners
from ui.arena import stream_run
from ui.replay import stream_replay
from ui.state import ArenaRequest

REQUEST = ArenaRequest(model="fake", n=3, c=2, k=4, max_tokens=16, task="logic3", seed=3)


@pytest.fixture(autouse=True)
def _no_handover_wait(monkeypatch) -> None:
    """These streams take turns in one thread, so a superseded one ends only when the test
    iterates it: a new stream does not wait for it (the handover has its own test)."""
    monkeypatch.setattr(owners, "HANDOVER_S", 0.0)


def _recording() -> Iterator[tuple]:
    setting = load_gallery().settings[0]
    return stream_replay(setting.unit(setting.questions[0]), seconds=0.0, interval=0.0)


def _live() -> Iterator[tuple]:
    return stream_run(REQUEST, FakePool(FakeBackend("fake", obeys_injection)), interval=0.0)


def test_a_run_started_while_a_recording_plays_takes_the_panels() -> None:
    playing = owners.owned(_recording(), "visitor")
    first = next(playing)
    assert "playing back" in first[0]
    run = owners.owned(_live(), "visitor")
    shown = next(run)  # the run's first frame: the recording is superseded from here on
    assert first[-1].superseded and not shown[-1].superseded
    assert list(playing) == []  # not one frame more, not even its "done"
    frames = [shown, *run]
    assert frames[-1][0].startswith("**Done**")  # the run itself goes on to its end
    assert owners.held() == 0  # both claims are dropped once their streams ended


def test_a_live_run_superseded_by_a_recording_stops_decoding_and_is_closed() -> None:
    closed = []

    def live() -> Iterator[tuple]:
        try:
            yield from _live()
        finally:
            closed.append(True)

    run = owners.owned(live(), "visitor")
    for frame in run:
        state = frame[-1]
        if state.events > 8:
            break
    events = state.events
    playing = owners.owned(_recording(), "visitor")
    next(playing)
    assert state.superseded and not state.stopped
    assert list(run) == [] and closed == [True]
    assert state.events == events  # no event decoded after the recording took the panels
    assert list(playing)[-1][0].endswith("to run this config now.")  # the recording plays on
    assert owners.held() == 0


def test_streams_of_other_sessions_and_outside_a_session_are_untouched() -> None:
    mine = owners.owned(_recording(), "visitor")
    next(mine)
    theirs = list(owners.owned(_live(), "another visitor"))
    outside = list(_live())  # the CLI and tests: no session, nothing claimed
    assert theirs[-1][0].startswith("**Done**") and outside[-1][0].startswith("**Done**")
    rest = list(mine)
    assert rest and "done" in rest[-1][0]  # the visitor's recording was never superseded
    assert owners.held() == 0


def test_a_stream_that_fails_releases_its_claim() -> None:
    def broken() -> Iterator[tuple]:
        yield from ()
        raise RuntimeError("the model went away")

    with pytest.raises(RuntimeError, match="went away"):
        list(owners.owned(broken(), "visitor"))
    assert owners.held() == 0
    assert owners.current_session() is None  # outside a Gradio event


def test_a_new_stream_shows_its_first_frame_only_after_the_one_it_replaced_ended(
    monkeypatch,
) -> None:
    """Served, each stream runs in its own thread: the new one waits for the old one's end, so the
    old one's last frame is queued before the new one's first."""
    monkeypatch.setattr(owners, "HANDOVER_S", 120.0)
    shown: list[str] = []
    playing = owners.owned(_slow_recording(), "visitor")
    shown.append(f"recording: {next(playing)[0]}")

    def play_on() -> None:
        for frame in playing:
            shown.append(f"recording: {frame[0]}")
        shown.append("recording ended")

    player = threading.Thread(target=play_on)
    player.start()
    run = owners.owned(_live(), "visitor")
    shown.append(f"run: {next(run)[0]}")
    player.join(timeout=60)
    assert not player.is_alive()
    first_run = next(i for i, line in enumerate(shown) if line.startswith("run:"))
    assert "recording ended" in shown[:first_run]  # the handover came first
    assert not [line for line in shown[first_run:] if line.startswith("recording")]
    list(run)
    assert owners.held() == 0


def _slow_recording() -> Iterator[tuple]:
    """A recording whose frames come slowly enough that a run starts while it plays."""
    for frame in _recording():
        threading.Event().wait(0.01)
        yield frame
