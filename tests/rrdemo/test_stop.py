"""Stopping inside a question: the engine reads its stop flag between decoding steps and turns,
so a run, or a web sweep whose time limit passed or whose client left, stops after the step under
way. Counted in decoding steps asked of a backend after the flag was set, never in seconds."""

from __future__ import annotations

import threading
import time

import gradio as gr
import pytest

from rrdemo.config import AgentSpec, RunConfig
from rrdemo.errors import Stopped
from rrdemo.protocols import run_question
from rrdemo.tasks import get_task, load_questions
from tests.support.fakes import FakeBackend, FakePool

LONG = "word " * 400  # every agent would write until L


class _Counting(FakeBackend):
    """A fake that counts the decoding steps (outputs) asked of it, those asked after `stop` was
    set, and sets `stop` itself at step `at` (None: never); `pause` seconds per step."""

    def __init__(self, stop: threading.Event, at: int | None = None, pause: float = 0.0) -> None:
        super().__init__("smollm2", lambda prompt: LONG)
        self.stop, self.at, self.pause = stop, at, pause
        self.steps = self.after_stop = 0

    def generate(self, requests):
        for out in super().generate(requests):
            if self.stop.is_set():
                self.after_stop += 1
            self.steps += 1
            if self.steps == self.at:
                self.stop.set()
            time.sleep(self.pause)
            yield out


@pytest.mark.parametrize("methods", [("MAJ",), ("RRMaj",), ("MAJ", "RRMaj")])
def test_a_run_stops_at_the_decoding_step_its_flag_is_set(methods) -> None:
    stop = threading.Event()
    backend = _Counting(stop, at=7)
    config = RunConfig(agents=(AgentSpec("smollm2"),) * 3, k=4, max_tokens=64)
    task = get_task("logic3")
    question = load_questions(task)[0]
    events = run_question(
        config, question, task, FakePool(backend), methods=methods, stop=stop, interleave=True
    )
    with pytest.raises(Stopped, match="stopped before it finished"):
        list(events)
    assert backend.steps == 7 and backend.after_stop == 0  # the step under way, then nothing
    assert backend.released  # its caches were freed


def test_a_turn_boundary_stop_asks_nothing_more_of_the_backend() -> None:
    stop = threading.Event()
    backend = _Counting(stop)
    config = RunConfig(agents=(AgentSpec("smollm2"),) * 3, k=4, max_tokens=64)
    task = get_task("logic3")
    events = run_question(
        config, load_questions(task)[0], task, FakePool(backend), methods=("RRMaj",), stop=stop
    )
    with pytest.raises(Stopped):
        for event in events:
            if event.kind == "chunk_written" and event.turn == 2:
                stop.set()
    assert backend.after_stop == 0
    assert max(len(call) for call in backend.calls) == 3 and len(backend.calls) == 3  # turns 0-2


def test_a_web_sweep_past_its_time_limit_stops_inside_its_question() -> None:
    from ui.experiments_tab import _sweep_callback, results_frame
    from ui.queue_limits import time_limited

    backend = _Counting(threading.Event(), pause=0.01)  # one question: 380+ steps, seconds
    frames = []
    readings = iter([0.0, 0.5, 2.0])  # the limit is 1 s: passed at the third reading
    sweep = _sweep_callback(FakePool(backend))

    def watched(*args):
        for frame in sweep(*args):
            frames.append(frame)
            yield frame

    limited = time_limited(watched, seconds=lambda: 1, clock=lambda: next(readings))
    with pytest.raises(gr.Error, match="time limit of 1 s"):
        list(limited(None, ["logic3"], "smollm2", "0c3t", ["strong"], 4, 64, 2, 0, ["static"]))
    at_stop = backend.steps  # the callback was closed: its flag is set
    worker = next(t for t in threading.enumerate() if t.name == "rrdemo-sweep")
    worker.join(30)
    assert not worker.is_alive()
    # The start frame, one heartbeat while the first question ran (the status line's time left,
    # nothing else), then the limit: the engine stopped within a step or two of the flag.
    assert len(frames) == 2 and frames[1][1:] == tuple(gr.skip() for _ in frames[1][1:])
    assert "left" in frames[1][0]
    assert backend.steps - at_stop <= 2
    assert len(results_frame(frames[0][-1])) == 0
