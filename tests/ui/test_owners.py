"""One stream owns a visitor's panels: a run started while a recording plays takes them, the
recording sends nothing more, a superseded live run stops decoding, and other sessions and
calls outside a session are untouched. A claim ends with its stream, and a stream nobody reads
any more (its client went away, nothing closed it) loses its claim after the lease, without the
garbage collector. Each test claims sessions of its own and looks only at those."""

from __future__ import annotations

import gc
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace

import pytest

from rrdemo.gallery import load_gallery
from tests.support.fakes import FakeBackend, FakePool, fake_pool, obeys_injection
from tests.support.served import HTTP_TIMEOUT_S, ServedApp, serve_app
from ui import owners
from ui.arena import stream_run
from ui.replay import stream_replay
from ui.state import ARENA_FIELDS, ArenaRequest

REQUEST = ArenaRequest(model="fake", n=3, c=2, k=4, max_tokens=16, task="logic3", seed=3)


@pytest.fixture
def visitor() -> str:
    """A session of this test's own."""
    return f"visitor-{uuid.uuid4().hex}"


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


def test_a_run_started_while_a_recording_plays_takes_the_panels(visitor) -> None:
    playing = owners.owned(_recording(), visitor)
    first = next(playing)
    assert "playing back" in first[0]
    run = owners.owned(_live(), visitor)
    shown = next(run)  # the run's first frame: the recording is superseded from here on
    assert first[-1].superseded and not shown[-1].superseded
    assert list(playing) == []  # not one frame more, not even its "done"
    frames = [shown, *run]
    assert frames[-1][0].startswith("**Done**")  # the run itself goes on to its end
    assert owners.holder(visitor) is None  # both claims are dropped once their streams ended


def test_a_live_run_superseded_by_a_recording_stops_decoding_and_is_closed(visitor) -> None:
    closed = []

    def live() -> Iterator[tuple]:
        try:
            yield from _live()
        finally:
            closed.append(True)

    run = owners.owned(live(), visitor)
    for frame in run:
        state = frame[-1]
        if state.events > 8:
            break
    events = state.events
    playing = owners.owned(_recording(), visitor)
    next(playing)
    assert state.superseded and not state.stopped
    assert list(run) == [] and closed == [True]
    assert state.events == events  # no event decoded after the recording took the panels
    assert list(playing)[-1][0].endswith("to run this config now.")  # the recording plays on
    assert owners.holder(visitor) is None


def test_streams_of_other_sessions_and_outside_a_session_are_untouched(visitor) -> None:
    mine = owners.owned(_recording(), visitor)
    next(mine)
    theirs = list(owners.owned(_live(), f"{visitor}-another"))
    outside = list(_live())  # the CLI and tests: no session, nothing claimed
    assert theirs[-1][0].startswith("**Done**") and outside[-1][0].startswith("**Done**")
    rest = list(mine)
    assert rest and "done" in rest[-1][0]  # the visitor's recording was never superseded
    assert owners.holder(visitor) is None


def test_a_stream_that_fails_releases_its_claim(visitor) -> None:
    def broken() -> Iterator[tuple]:
        yield from ()
        raise RuntimeError("the model went away")

    with pytest.raises(RuntimeError, match="went away"):
        list(owners.owned(broken(), visitor))
    assert owners.holder(visitor) is None
    assert owners.session_of(None) is None  # outside a Gradio event


def test_a_new_stream_shows_its_first_frame_only_after_the_one_it_replaced_ended(
    monkeypatch, visitor
) -> None:
    """Served, each stream runs in its own thread: the new one waits for the old one's end, so the
    old one's last frame is queued before the new one's first."""
    monkeypatch.setattr(owners, "HANDOVER_S", 120.0)
    shown: list[str] = []
    playing = owners.owned(_slow_recording(), visitor)
    shown.append(f"recording: {next(playing)[0]}")

    def play_on() -> None:
        for frame in playing:
            shown.append(f"recording: {frame[0]}")
        shown.append("recording ended")

    player = threading.Thread(target=play_on)
    player.start()
    run = owners.owned(_live(), visitor)
    shown.append(f"run: {next(run)[0]}")
    player.join(timeout=60)
    assert not player.is_alive()
    first_run = next(i for i, line in enumerate(shown) if line.startswith("run:"))
    assert "recording ended" in shown[:first_run]  # the handover came first
    assert not [line for line in shown[first_run:] if line.startswith("recording")]
    list(run)
    assert owners.holder(visitor) is None


def _slow_recording() -> Iterator[tuple]:
    """A recording whose frames come slowly enough that a run starts while it plays."""
    for frame in _recording():
        threading.Event().wait(0.01)
        yield frame


def test_a_stream_left_unread_loses_its_claim_after_the_lease(monkeypatch, visitor) -> None:
    """A generator nobody closes and nobody reads (referenced, so no collector would end it)."""
    monkeypatch.setattr(owners, "LEASE_S", 0.2)
    left = [owners.owned(_slow_recording(), visitor)]
    first = next(left[0])
    assert owners.holder(visitor) is not None  # held while its frame waits within the lease
    gc.disable()  # the claim must end without the collector
    try:
        time.sleep(0.5)
        assert owners.holder(visitor) is None
        assert first[-1].superseded  # it was swept, and says so to the stream's own checks
        assert list(left[0]) == []  # read again later, it sends nothing more
    finally:
        gc.enable()


def test_a_new_stream_does_not_wait_for_one_that_was_abandoned(monkeypatch, visitor) -> None:
    monkeypatch.setattr(owners, "LEASE_S", 0.2)
    monkeypatch.setattr(owners, "HANDOVER_S", 120.0)  # a stream still read would be waited for
    left = owners.owned(_slow_recording(), visitor)
    next(left)
    time.sleep(0.5)
    started = time.monotonic()
    run = owners.owned(_live(), visitor)
    assert next(run)[0]
    assert time.monotonic() - started < 60  # a hang guard: the abandoned one is not waited for
    assert list(left) == []
    list(run)
    assert owners.holder(visitor) is None


@pytest.fixture(scope="module")
def slow_app(tmp_path_factory) -> Iterator[ServedApp]:
    """The real app with scripted agents that take a while: a run is mid-way when its client
    goes away."""
    yield from serve_app(fake_pool(delay=0.3), tmp_path_factory.mktemp("owners"))


def _start_run(app: ServedApp, session: str) -> str:
    """Post an Arena run for `session` to the real server, read its first frame and hang up;
    returns the run's event id."""
    import httpx

    request = replace(REQUEST, model="obey", c=1, k=8, max_tokens=64)
    posted = httpx.post(
        f"{app.url}gradio_api/call/run",
        json={"data": [getattr(request, name) for name in ARENA_FIELDS], "session_hash": session},
        timeout=HTTP_TIMEOUT_S,
    )
    assert posted.status_code == 200, posted.text
    event_id = posted.json()["event_id"]
    with httpx.stream(
        "GET", f"{app.url}gradio_api/call/run/{event_id}", timeout=HTTP_TIMEOUT_S
    ) as stream:
        for line in stream.iter_lines():
            if line.startswith("event: generating"):
                break
    return event_id


def _claim_gone(session: str, seconds: float = 60) -> bool:
    """Whether `session`'s claim ends within `seconds` (a hang guard), with the collector off."""
    gc.disable()
    try:
        deadline = time.monotonic() + seconds
        while owners.holder(session) is not None and time.monotonic() < deadline:
            time.sleep(0.1)
        return owners.holder(session) is None
    finally:
        gc.enable()


def test_a_run_whose_client_went_away_mid_run_gives_up_its_claim(
    slow_app: ServedApp, monkeypatch, visitor
) -> None:
    """Through the real server: the client reads the run's first frame and hangs up."""
    monkeypatch.setattr(owners, "LEASE_S", 1.0)
    _start_run(slow_app, visitor)
    assert owners.holder(visitor) is not None  # the run had its panels when its client left
    assert _claim_gone(visitor)


def test_a_run_still_going_when_its_server_closes_gives_up_its_claim(
    tmp_path, monkeypatch, visitor
) -> None:
    """Gradio closes a run's stream when its client hangs up, but not when the app closes with
    the run mid-way: nothing reads or closes that stream again."""
    monkeypatch.setattr(owners, "LEASE_S", 1.0)
    served = serve_app(fake_pool(delay=0.3), tmp_path)
    app = next(served)
    _start_run(app, visitor)
    assert owners.holder(visitor) is not None
    next(served, None)  # the app closes
    assert _claim_gone(visitor)


def test_reset_supersedes_and_forgets_every_claim(visitor) -> None:
    """The suite's autouse reset: a stream an earlier test left unread holds no panels after it,
    and is superseded (it ends at its next frame without showing one)."""
    playing = owners.owned(_recording(), visitor)
    next(playing)
    assert owners.holder(visitor) is not None
    owners.reset()
    assert owners.holder(visitor) is None
    assert list(playing) == []
