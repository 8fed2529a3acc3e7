"""Replays bounded in size, time and buffer, against the real app on a real port.

The probe: a 2 MB log with one chunk of a million words and `n_tokens` 1e9 took 67 s of CPU and
480 MB per replay (a victim's run went from 2.8 to 108 s with four at once); two replays joined
and never read held 4 GB of unread frames; a refused log was parsed again on every upload; the
"Question of your log" pick bootstrapped the whole log on every call outside any limit. Here a
log past the stated sizes is refused at upload in one sentence (`rrdemo.replay.check_replayable`),
an uploaded log is read once per content (`ui.uploaded_logs.UploadedLogs`, refusals too), the pick is a
replay (2 per client), and a replay's frames are made only as they are read (`ui.streams`)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rrdemo.errors import RRError
from rrdemo.gallery import load_gallery
from rrdemo.replay import MAX_RECORDS
from tests.rrdemo.test_replay import crafted_log
from tests.security.victim import answered_meanwhile
from tests.support.fakes import fake_pool
from tests.support.served import HTTP_TIMEOUT_S, ServedApp, app_client, serve_app
from ui import streams
from ui.queue_door import door_of
from ui.queue_limits import REPLAY, REPLAY_PER_CLIENT
from ui.streams import deadlined
from ui.uploaded_logs import UploadedLogs

ASSETS = Path(__file__).resolve().parents[2] / "assets"
READ_WAIT_S = 2.0  # the served app's wait for a reader (30 s in the app): the property, quicker


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[ServedApp]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RRDEMO_PROXY_HOPS", "1")
        env.setattr(streams, "READ_WAIT_S", READ_WAIT_S)
        yield from serve_app(fake_pool(), tmp_path_factory.mktemp("replays"))


def _crafted_chunk(path: Path, text: str, n_tokens) -> Path:
    """A real log whose first chunk is replaced (the probe's upload)."""
    lines = (ASSETS / "experiment_small.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["chunks"][0].update(text=text, n_tokens=n_tokens)
    lines[1] = json.dumps(record)
    path.write_text("\n".join(lines[:40]) + "\n")
    return path


def _upload_refusal(served: ServedApp, path: Path) -> str:
    from gradio_client import handle_file
    from gradio_client.exceptions import AppError

    client = app_client(served.url, download_files=False)
    with pytest.raises(AppError) as refused:
        client.predict(handle_file(str(path)), api_name="/upload_log")
    message = str(refused.value)
    assert "Traceback" not in message and 'error": null' not in message
    assert str(path.parent) not in message  # the file by its name, never its server path
    return message


def test_a_log_past_the_stated_sizes_is_refused_at_upload(served: ServedApp, tmp_path) -> None:
    words = _crafted_chunk(tmp_path / "million.jsonl", "a " * 1_000_000, 10**9)
    assert words.stat().st_size > 1.9e6  # the probe's 2 MB upload
    assert "token count is 1000000000; a chunk holds text and 0 to 32768 tokens" in (
        _upload_refusal(served, words)
    )
    long = _crafted_chunk(tmp_path / "words.jsonl", "a " * 40_000, 16)
    assert "million" not in (message := _upload_refusal(served, long))
    assert "words.jsonl: line 2 has a chunk of more than 32768 words" in message
    huge = _crafted_chunk(tmp_path / "huge.jsonl", "a", 10**300)  # the LOW probe's n_tokens
    assert "token count is a value out of range" in _upload_refusal(served, huge)
    many = crafted_log(tmp_path / "crafted.jsonl", MAX_RECORDS + 1)
    assert f"has 20,001 records; a log replayed here has at most {MAX_RECORDS:,}" in (
        _upload_refusal(served, many)
    )
    answered_meanwhile(served.url)


def test_a_log_is_read_once_per_content_refused_or_not(tmp_path) -> None:
    logs = UploadedLogs()
    refused = crafted_log(tmp_path / "crafted.jsonl", MAX_RECORDS + 1)
    twin = tmp_path / "other-name.jsonl"
    twin.write_bytes(refused.read_bytes())
    with pytest.raises(RRError, match=r"^crafted\.jsonl has 20,001 records"):
        logs.choices(str(refused))
    with pytest.raises(RRError, match=r"^other-name\.jsonl has 20,001 records"):
        logs.choices(str(twin))  # the same bytes: refused from memory, under its own name
    assert logs.reads == 1
    fine = crafted_log(tmp_path / "mine.jsonl", 2000)
    choices = logs.choices(str(fine))
    assert len(choices) == 2000 and logs.choices(str(fine)) == choices and logs.reads == 2
    for i in range(70):  # both caches are bounded
        (tmp_path / f"n{i}.jsonl").write_text(f"not a log {i}\n")
        with pytest.raises(RRError):
            logs.choices(str(tmp_path / f"n{i}.jsonl"))
    assert len(logs.refused) == logs.most_refused and len(logs.read_logs) <= logs.size


def _join(served: ServedApp, fn_index: int, data: list, address: str):
    import httpx

    return httpx.post(
        f"{served.url}gradio_api/queue/join",
        json={"data": data, "fn_index": fn_index, "session_hash": uuid.uuid4().hex},
        headers={"X-Forwarded-For": address},
        timeout=HTTP_TIMEOUT_S,
    )


def _pick_index(served: ServedApp) -> int:
    """The "Question of your log" pick: the event whose inputs are the upload and its dropdown."""
    labels = {"A run log (.jsonl) written by `rrdemo experiment --out`", "Question of your log"}
    return next(
        i
        for i, fn in served.demo.fns.items()
        if {getattr(b, "label", None) for b in fn.inputs} == labels
    )


def test_the_log_pick_is_a_replay_and_its_bad_values_are_named(served: ServedApp) -> None:
    pick = _pick_index(served)
    fn = served.demo.fns[pick]
    assert fn.queue and fn.concurrency_id == REPLAY
    nothing = _join(served, pick, [], "10.70.0.1")
    assert nothing.status_code == 422 and "takes 2 values, got 0" in nothing.text
    passwd = _join(served, pick, [{"path": "/etc/passwd"}, "x|q0"], "10.70.0.1")
    assert passwd.status_code == 422 and "send a file uploaded to this app" in passwd.text
    assert "/etc/passwd" not in passwd.json()["detail"][0]["message"]
    codes = [_join(served, pick, [None, "x|q0"], "10.70.0.2").status_code for _ in range(8)]
    assert codes.count(200) <= REPLAY_PER_CLIENT and set(codes) <= {200, 422}
    answered_meanwhile(served.url)


def _pending(served: ServedApp, session: str) -> int:
    """Frames gradio holds for `session`'s client and has not sent (read from gradio's queue;
    its other messages, the start and the estimate, are not frames)."""
    messages = served.demo._queue.pending_messages_per_session.get(session)
    held = list(messages._queue) if messages is not None else []
    return sum(str(m.msg).endswith("process_generating") for m in held)


def test_an_unread_replay_holds_at_most_two_frames_and_ends(served: ServedApp) -> None:
    import httpx

    setting = load_gallery().settings[0]
    choice = f"0/{setting.questions[0]}"
    address = "10.71.0.1"
    door = door_of(served.demo)
    posted = [
        httpx.post(
            f"{served.url}gradio_api/call/replay",
            json={"data": [choice]},
            headers={"X-Forwarded-For": address},
            timeout=HTTP_TIMEOUT_S,
        )
        for _ in range(REPLAY_PER_CLIENT)
    ]
    assert [p.status_code for p in posted] == [200] * REPLAY_PER_CLIENT
    sessions = [p.json()["event_id"] for p in posted]  # a raw call's session is its event
    time.sleep(READ_WAIT_S / 2)
    assert max(_pending(served, s) for s in sessions) <= 2  # before: every frame of 12 s
    answered_meanwhile(served.url)
    # nobody reads: each replay ends after READ_WAIT_S, and its client's slots are free again
    deadline = time.monotonic() + 10 * READ_WAIT_S + 30
    while door.ledger.held(f"ip:{address}", REPLAY) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert door.ledger.held(f"ip:{address}", REPLAY) == 0
    assert max(_pending(served, s) for s in sessions) <= 2  # and no frame was made after


def test_a_stream_stops_at_its_wall_and_cpu_deadlines() -> None:
    now, cpu, closed = [0.0], [0.0], []

    def frames(wall: float, spent: float):
        try:
            for i in range(100):
                now[0] += wall
                cpu[0] += spent
                yield i
        finally:
            closed.append(True)

    def played(wall: float, spent: float) -> list[int]:
        seen = []
        limited = deadlined(frames(wall, spent), 10, 2, "replay", lambda: now[0], lambda: cpu[0])
        with pytest.raises(Exception, match="passed this app's limit of") as stopped:
            seen.extend(limited)
        return seen, str(stopped.value)

    seen, why = played(4.0, 0.0)
    assert seen == [0, 1, 2] and "10 s" in why and closed == [True]
    seen, why = played(0.0, 0.5)
    assert seen == [0, 1, 2, 3, 4] and "2 s of CPU" in why and closed == [True, True]
