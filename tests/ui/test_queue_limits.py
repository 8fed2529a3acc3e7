"""How long the queue may grow and how long a run may take: who a client is
(signed-in user, else address; a forged X-Forwarded-For counts for nothing), why a new event may
not join (its values; per client and in total for model runs and replays; any event per client),
and a run stopped at its wall-time limit. The limits on a live app: test_security.py."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import pytest

from app import QUEUE_MAX_SIZE
from rrdemo.errors import RRError
from ui.queue_limits import (
    EVENTS_PER_CLIENT,
    GENERATION,
    GENERATION_PER_CLIENT,
    GENERATION_TOTAL,
    REPLAY,
    REPLAY_PER_CLIENT,
    REPLAY_TOTAL,
    client_key,
    payload_refusal,
    refusal,
    run_seconds,
    time_limited,
)


def test_a_client_at_their_limit_is_told_to_wait_for_their_own_runs():
    mine = [(GENERATION, "ip:1")] * GENERATION_PER_CLIENT
    reason = refusal(mine, "ip:1", GENERATION)
    assert reason is not None and f"already have {GENERATION_PER_CLIENT} runs" in reason
    assert refusal(mine[1:], "ip:1", GENERATION) is None
    assert refusal(mine, "ip:2", GENERATION) is None


def test_a_full_queue_refuses_everyone_and_says_the_cheap_tabs_still_answer():
    others = [(GENERATION, f"ip:{i}") for i in range(GENERATION_TOTAL)]
    reason = refusal(others, "new", GENERATION)
    assert reason is not None and f"full ({GENERATION_TOTAL} runs" in reason and "Theory" in reason
    assert refusal(others[1:], "new", GENERATION) is None
    full_of_mine = [(GENERATION, "me")] * GENERATION_PER_CLIENT + others
    assert "already have" in refusal(full_of_mine, "me", GENERATION)


def test_replays_have_their_own_limits_and_no_client_fills_the_whole_queue():
    playing = [(REPLAY, "ip:1")] * REPLAY_PER_CLIENT
    assert "already have 2 replays waiting or playing" in refusal(playing, "ip:1", REPLAY)
    assert refusal(playing, "ip:1", GENERATION) is None  # a model run is another group
    assert refusal(playing, "ip:2", REPLAY) is None
    full = [(REPLAY, f"ip:{i}") for i in range(REPLAY_TOTAL)]
    assert f"replay queue is full ({REPLAY_TOTAL} replays" in refusal(full, "new", REPLAY)
    # Cheap reads of any group count towards one limit per client, far below gradio's 256.
    reads = [(f"read{i}", "ip:1") for i in range(EVENTS_PER_CLIENT)]
    assert f"already have {EVENTS_PER_CLIENT} requests" in refusal(reads, "ip:1", "theory")
    assert refusal(reads[1:], "ip:1", "theory") is None
    assert refusal(reads, "ip:2", "theory") is None
    assert EVENTS_PER_CLIENT < QUEUE_MAX_SIZE


def _fn(inputs: list, preprocess: bool = True) -> SimpleNamespace:
    return SimpleNamespace(inputs=inputs, preprocess=preprocess)


def test_values_are_one_per_input_and_numbers_where_numbers_are():
    with gr.Blocks():
        n = gr.Slider(1, 9, step=1, label="N (agents)")
        number = gr.Number(label="submission #", precision=0)
        temperature = gr.Number(label="temperature")
        text = gr.Textbox(label="question")
    fn = _fn([n, number, temperature, text])
    assert payload_refusal(fn, [3, 2, 0.7, "why"]) is None
    assert payload_refusal(fn, [3, None, 0.7, None]) is None  # an empty number box may be sent
    assert "takes 4 values, got 3" in payload_refusal(fn, [3, 2, 0.7])
    assert "takes 4 values, got 30" in payload_refusal(fn, [3] * 30)
    for values, reason in [
        (["3", 2, 0.7, ""], "N (agents) must be a number, got a text."),
        ([None, 2, 0.7, ""], "N (agents) must be a number, got nothing."),
        ([[3], 2, 0.7, ""], "N (agents) must be a number, got a list."),
        ([float("nan"), 2, 0.7, ""], "N (agents) must be a number, got nan."),
        ([3, 1.5, 0.7, ""], "submission # must be a whole number, got 1.5."),
        ([3, True, 0.7, ""], "submission # must be a whole number, got true."),
        ([3, 2, float("inf"), ""], "temperature must be a number, got inf."),
        ([3, 2, {"x": 1}, ""], "temperature must be a number, got an object."),
    ]:
        assert payload_refusal(fn, values) == reason
    # An event that checks its own values (preprocess=False) gets them as sent, counted only.
    assert payload_refusal(_fn([n, number], preprocess=False), ["x", 1.5]) is None
    assert "takes 2 values, got 1" in payload_refusal(_fn([n, number], preprocess=False), ["x"])


def _request(host: str, forwarded: str = "", session: dict | None = None) -> SimpleNamespace:
    scope = {"session": session} if session is not None else {}
    headers = {"x-forwarded-for": forwarded} if forwarded else {}
    return SimpleNamespace(
        scope=scope, session=session, headers=headers, client=SimpleNamespace(host=host)
    )


def test_a_client_is_the_signed_in_user_else_the_address(monkeypatch):
    monkeypatch.delenv("SPACE_ID", raising=False)
    monkeypatch.delenv("RRDEMO_PROXY_HOPS", raising=False)
    assert client_key(_request("1.2.3.4"), "alice") == "user:alice"
    oauth = {"oauth_info": {"userinfo": {"preferred_username": "bob"}}}
    assert client_key(_request("1.2.3.4", session=oauth)) == "user:bob"
    assert client_key(_request("1.2.3.4", session={})) == "ip:1.2.3.4"
    # With no proxy in front, X-Forwarded-For is the client's own text: ignored.
    assert client_key(_request("1.2.3.4", "9.9.9.9")) == "ip:1.2.3.4"
    # Behind one proxy (a Space), the address it appended counts; what the client wrote does not.
    monkeypatch.setenv("SPACE_ID", "me/app")
    assert client_key(_request("10.0.0.1", "6.6.6.6, 5.6.7.8")) == "ip:5.6.7.8"
    assert client_key(_request("10.0.0.1")) == "ip:10.0.0.1"
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "2")
    assert client_key(_request("10.0.0.1", "6.6.6.6, 5.6.7.8, 10.0.0.2")) == "ip:5.6.7.8"
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "some")
    with pytest.raises(RRError, match="RRDEMO_PROXY_HOPS must be a whole number"):
        client_key(_request("10.0.0.1"))


def test_a_run_past_its_wall_time_is_closed_with_a_message(monkeypatch):
    now = [0.0]
    closed = []

    def frames(n: int):
        try:
            for i in range(n):
                now[0] += 4.0  # each frame takes 4 s
                yield i
        finally:
            closed.append(True)

    limited = time_limited(frames, seconds=lambda: 10, clock=lambda: now[0])
    seen = []
    with pytest.raises(gr.Error, match="time limit of 10 s and was stopped"):
        for frame in limited(100):
            seen.append(frame)
    assert seen == [0, 1, 2] and closed == [True]  # stopped at 12 s, its finally ran
    assert list(time_limited(frames, seconds=lambda: 10, clock=lambda: now[0])(2)) == [0, 1]
    monkeypatch.setenv("RRDEMO_RUN_SECONDS", "0")
    with pytest.raises(RRError, match="RRDEMO_RUN_SECONDS must be a whole number of at least 1"):
        run_seconds()
    monkeypatch.delenv("RRDEMO_RUN_SECONDS")
    assert run_seconds() == 600


def test_a_file_value_is_one_this_app_received(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "uploads"))
    uploaded = tmp_path / "uploads" / ("a" * 64) / "run.jsonl"
    uploaded.parent.mkdir(parents=True)
    uploaded.write_text("{}")
    with gr.Blocks():
        log = gr.File(label="run log")
    fn = _fn([log])
    assert (
        payload_refusal(fn, [{"path": str(uploaded), "meta": {"_type": "gradio.FileData"}}]) is None
    )
    assert payload_refusal(fn, [None]) is None
    outside = tmp_path / "secret.txt"
    outside.write_text("x")
    refused = {
        payload_refusal(fn, [value])
        for value in (
            {"path": "/etc/passwd"},
            {"path": str(outside)},
            {"path": str(tmp_path / "uploads" / ".." / "secret.txt")},
            {"path": str(tmp_path / "uploads")},
            {"path": 5},
            "/etc/passwd",
            [str(uploaded)],
        )
    }
    assert refused == {
        "run log: send a file uploaded to this app (the page's upload, or handle_file)."
    }
