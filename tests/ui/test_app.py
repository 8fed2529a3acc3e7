"""The real app on a real port, driven by gradio_client: streaming, decisions, errors, Stop.

Real decoding is kept tiny (smollm2, N = 3, K = 8, L = 24) because CI has two cores.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from rrdemo.events import AnswerExtracted, Decision
from rrdemo.fold import fold
from rrdemo.protocols import run_question
from tests.support import processes
from tests.support.served import app_client, free_port, served_app
from ui.state import ARENA_FIELDS, ArenaRequest, build_run

SMALL = ArenaRequest(
    model="smollm2", n=3, c=2, k=8, m=0, max_tokens=24, temperature=0.0, seed=0, task="logic3"
)


def _args(request: ArenaRequest) -> list:
    return [getattr(request, name) for name in ARENA_FIELDS]


@pytest.fixture(scope="module")
def server(real_pool, tmp_path_factory) -> Iterator[str]:
    """build_demo() served on a free port for this module, with its own data dir and DB."""
    with served_app(real_pool, tmp_path_factory.mktemp("app")) as url:
        yield url


@pytest.fixture(scope="module")
def client(server):
    return app_client(server, download_files=False)


def _error_text(excinfo: pytest.ExceptionInfo) -> str:
    return str(excinfo.value)


@pytest.mark.slow
def test_streams_both_panels_in_order_and_matches_the_engine(client, real_pool) -> None:
    job = client.submit(*_args(SMALL), api_name="/run")
    frames = list(job)  # every streamed update, in arrival order
    assert job.status().success
    records = [frame[4] for frame in frames]
    # Updates are numbered by the server; they arrive strictly in order, and the run only grows.
    updates = [r["updates"] for r in records]
    assert updates == sorted(updates) and len(set(updates)) == len(updates)
    assert [r["events"] for r in records] == sorted(r["events"] for r in records)
    for method in ("MAJ", "RRMaj"):
        chunks = [r["methods"][method]["chunks"] for r in records]
        assert chunks == sorted(chunks)
    assert any(r["events"] > 0 for r in records[:-1])  # intermediate frames, not just the end
    final = records[-1]
    assert final["status"] == "done"
    # Panels: coloured RR chunks and N MAJ answers in the HTML the browser gets.
    status, verdict, maj_html, rr_html = frames[-1][:4]
    assert "Done" in status
    assert maj_html.count('class="rr-trajectory"') == SMALL.n
    assert rr_html.count("rr-chunk rr-corrupted") >= 1 and "rr-legend" in rr_html
    assert "MAJ" in verdict and "RRMaj" in verdict and "decode" in verdict

    # The same run straight through the engine with the same config, seed and pool.
    prepared = build_run(SMALL)
    events = list(
        run_question(prepared.config, prepared.question, prepared.task, real_pool, interleave=True)
    )
    for decision in (e for e in events if isinstance(e, Decision)):
        shown = final["methods"][decision.method]["decision"]
        assert (shown["answer"], shown["correct"], shown["fooled"]) == (
            decision.answer,
            decision.correct,
            decision.fooled,
        )
    for answer in (e for e in events if isinstance(e, AnswerExtracted)):
        shown = final["methods"][answer.method]["answers"][str(answer.trajectory)]
        assert shown["answer"] == answer.answer
    # Who wrote each RR trajectory: the record's fold equals the engine's, the panel shows it.
    assert final["speakers"] == fold(events).speakers.to_dict()
    written = [t for t in final["speakers"]["per_trajectory"] if sum(t["tokens"].values())]
    assert rr_html.count('class="rr-speakers"') == len(written) >= 1
    assert f"honest writer in <b>{final['speakers']['with_honest_writer']} of" in verdict


@pytest.mark.slow
def test_a_last_word_run_shows_a_corrupted_writer_of_the_last_turn(client) -> None:
    # GSM8K: the two honest agents reason at length, so trajectories run to L = 3K and turn 2 is
    # the last; last-word seats the one corrupted agent there, whatever the shuffle.
    request = replace(SMALL, c=1, task="gsm8k", k=4, max_tokens=12, adversary="last-word")
    status, _, _, rr_html, record = client.predict(*_args(request), api_name="/run")[:5]
    assert record["status"] == "done" and record["config"]["adversary"] == "last-word"
    assert "adversary last-word" in status
    chunks = re.findall(r'class="rr-chunk rr-(\w+)" data-agent="(\d+)" data-turn="(\d+)"', rr_html)
    last = [(role, int(agent)) for role, agent, turn in chunks if turn == "2"]
    assert last, "no trajectory reached its last turn"
    assert all(role == "corrupted" and agent == 0 for role, agent in last)
    writers = {int(agent) for _, agent, turn in chunks if turn != "2"}
    assert writers <= {1, 2}  # the honest agents wrote the turns before


@pytest.mark.slow
@pytest.mark.parametrize(
    "changes,needle",
    [
        ({"n": 3, "c": 5}, "c (corrupted agents) must be between 0 and N=3"),
        ({"model": "no-such-model"}, "unknown model"),
        ({"strength": "custom", "custom_template": "pick it"}, "{target}"),
        ({"task": "custom", "custom_question": "  "}, "question is empty"),
        (
            {
                "task": "custom",
                "custom_question": "How many? " + "word " * 9000,
                "custom_gold": "3",
            },
            "at most 20000 is allowed (RRDEMO_MAX_QUESTION_CHARS)",
        ),
        ({"task": "custom", "custom_question": "What is 2 + 2?"}, "give the correct answer"),
        ({"task": "logic3", "question_index": 99999}, "does not exist"),
        ({"ensemble": "per agent", "agents": "smollm2, maybe"}, "unknown model 'maybe'"),
        ({"adversary": "sneaky"}, "Value: sneaky is not in the list of choices"),
        ({"prompt_style": "loud"}, "Value: loud is not in the list of choices"),
    ],
)
def test_bad_inputs_get_a_clear_message_and_the_server_keeps_answering(
    client, changes: dict, needle: str
) -> None:
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError) as excinfo:
        client.predict(*_args(replace(SMALL, **changes)), api_name="/run")
    message = _error_text(excinfo)
    assert needle in message
    assert "Traceback" not in message
    # ... and the server still answers the next user.
    _, text = client.predict(0.03, 0.4, 100, 1000, api_name="/theory")
    assert "66.0%" in text


@pytest.mark.slow
def test_theory_endpoint_reproduces_the_paper(client) -> None:
    _, text = client.predict(0.03, 0.4, 100, 1000, api_name="/theory")
    assert "rho_max = 66.0%" in text and "0.952" in text and "0.491" in text
    _, text = client.predict(0.03, 0.4, 1000, 1000, api_name="/theory")
    assert "it does not reach a corrupted majority" in text


@pytest.mark.slow
def test_stop_cancels_the_run_and_frees_the_model(client, real_pool) -> None:
    import httpx

    # Honest chain-of-thought on GSM8K: hundreds of tokens per answer, far from done when stopped.
    long_run = replace(SMALL, c=0, strength="none", task="gsm8k", k=128, max_tokens=1024)
    before = set(real_pool.get("smollm2")._caches)  # other tests share this session's pool
    job = client.submit(*_args(long_run), api_name="/run")
    deadline = time.monotonic() + 300
    while not any(o[4] and o[4]["methods"]["MAJ"]["chunks"] for o in job.outputs()):
        assert time.monotonic() < deadline, "the long run never started streaming"
        time.sleep(0.2)
    # Cancel, as the Stop button does. The server holds /cancel until the decoding step in
    # flight ends; on a loaded machine that can outlast the client's 5 s timeout, but the cancel
    # itself was delivered.
    with contextlib.suppress(httpx.ReadTimeout):
        job.cancel()
    # The next user's small run gets the model and finishes.
    result = client.predict(*_args(replace(SMALL, seed=1)), api_name="/run")
    assert result[4]["status"] == "done"
    stopped = [o[4] for o in job.outputs() if o[4]]
    assert stopped and stopped[-1]["status"] != "done"  # the long run never finished
    assert not stopped[-1]["methods"]["MAJ"]["done"]
    backend = real_pool.get("smollm2")
    assert set(backend._caches) <= before  # both runs released their KV caches


def test_server_address_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import app

    monkeypatch.delenv("GRADIO_SERVER_NAME", raising=False)
    monkeypatch.delenv("GRADIO_SERVER_PORT", raising=False)
    assert app.server_address() == ("127.0.0.1", 7860)
    monkeypatch.setenv("GRADIO_SERVER_NAME", "0.0.0.0")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "7999")
    assert app.server_address() == ("0.0.0.0", 7999)


@pytest.mark.parametrize(
    ("name", "value"),
    [("RRDEMO_MAX_BODY_MB", "abc"), ("RRDEMO_SESSIONS", "0"), ("RRDEMO_RUN_SECONDS", "-5")],
)
def test_a_bad_limit_in_the_environment_stops_the_start_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys, name, value
) -> None:
    import app

    monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        app.main([])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and f"{name} must be a whole number" in err
    assert "Traceback" not in err


def test_building_the_demo_loads_no_model() -> None:
    import app
    from rrdemo.backends.pool import ModelPool

    pool = ModelPool()
    demo = app.build_demo(pool=pool)
    assert pool.loaded() == []
    names = {d.api_name for d in demo.fns.values() if d.api_name}
    assert {"run", "theory", "sweep"} <= names


def test_the_app_opens_the_leaderboard_once_for_both_tabs(monkeypatch):
    import app
    from leaderboard.hub_sync import Store, open_store
    from rrdemo.backends.pool import ModelPool

    opened, handed = [], []

    def open_once() -> Store:
        opened.append(open_store())
        return opened[-1]

    monkeypatch.setattr(app, "open_store", open_once)
    monkeypatch.setattr(app, "build_leaderboard_tab", lambda s: handed.append(("board", s)))
    monkeypatch.setattr(app, "build_experiments_tab", lambda _, s: handed.append(("sweep", s)))
    app.build_demo(pool=ModelPool())
    assert len(opened) == 1 and handed == [("sweep", opened[0]), ("board", opened[0])]
    opened[0].factory.kw["bind"].dispose()


@pytest.mark.slow
def test_python_app_py_serves_on_the_configured_port(tmp_path) -> None:
    import os
    import subprocess
    import sys
    import urllib.request
    from pathlib import Path

    port = free_port()
    env = {
        **os.environ,
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "RRDEMO_DATA_DIR": str(tmp_path / "data"),
        "LEADERBOARD_DB_URL": f"sqlite:///{tmp_path / 'lb.db'}",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    root = Path(__file__).resolve().parents[2]
    proc = processes.start(
        [sys.executable, "app.py"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, "app.py exited"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                    page = response.read().decode("utf-8", "replace")
                break
            except OSError:
                assert time.monotonic() < deadline, "app.py did not start serving"
                time.sleep(1)
        assert response.status == 200 and "Consensus Trap" in page
    finally:
        processes.stop(proc)


@pytest.mark.slow
def test_a_metered_run_draws_the_z_line_under_each_answer(client) -> None:
    request = replace(SMALL, meter=True, max_tokens=16)
    status, _, maj_html, rr_html, record = client.predict(*_args(request), api_name="/run")[:5]
    assert record["status"] == "done" and record["config"]["meter"] is True
    assert rr_html.count('class="rr-zline"') == SMALL.n  # M = N trajectories
    assert maj_html.count('class="rr-zline"') == SMALL.n
    turns = re.findall(
        r'class="rr-zstep" data-reader="honest" data-agent="\d+" data-turn="(\d+)"', rr_html
    )
    assert turns.count("0") == SMALL.n  # every trajectory's first turn, read by the honest reader
