"""Recorded runs in the real app on a real port (gradio_client): a gallery replay streams the
recorded decisions into the Arena's panels with no model loaded; uploads get plain messages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rrdemo.gallery import cached_log, load_gallery
from tests.support.served import app_client, served_app

ASSETS = Path(__file__).resolve().parents[2] / "assets"


@pytest.fixture(scope="module")
def fresh_pool():
    """A pool that has loaded nothing: a replay must not need a model."""
    from rrdemo.backends.pool import ModelPool

    return ModelPool()


@pytest.fixture(scope="module")
def client(fresh_pool, tmp_path_factory) -> Iterator:
    with served_app(fresh_pool, tmp_path_factory.mktemp("app")) as url:
        yield app_client(url, download_files=False)


def test_a_gallery_replay_streams_the_recorded_run(client, fresh_pool) -> None:
    setting = load_gallery().settings[0]
    qid = setting.questions[-1]
    unit = setting.unit(qid)
    job = client.submit(f"0/{qid}", api_name="/replay")
    frames = list(job)
    assert job.status().success
    records = [frame[4] for frame in frames]
    assert len(records) > 5  # streamed, not one final frame
    assert [r["events"] for r in records] == sorted(r["events"] for r in records)
    assert all(r["recorded"] == unit.provenance() for r in records)
    model = cached_log(setting.log).conditions[setting.condition]["ensemble"]
    assert all(frame[0].startswith(f"**Recorded** · {model} · 2026-") for frame in frames)
    assert "Recorded" in frames[-1][2] and "Recorded" in frames[-1][3]  # both panels say it
    final = records[-1]
    for method in ("MAJ", "RRMaj"):
        logged = unit.done["votes"][method]
        decision = final["methods"][method]["decision"]
        assert (decision["answer"], decision["correct"]) == (logged["answer"], logged["correct"])
    assert fresh_pool.loaded() == []


def test_uploads_get_plain_messages_and_list_their_questions(client, tmp_path: Path) -> None:
    from gradio_client import handle_file

    notes = tmp_path / "notes.jsonl"
    notes.write_text("hello\n")
    with pytest.raises(Exception) as excinfo:
        client.predict(handle_file(str(notes)), api_name="/upload_log")
    message = str(excinfo.value)
    assert "notes.jsonl is not an rrdemo experiment log" in message
    assert "rrdemo experiment --out" in message
    assert str(tmp_path) not in message and "/tmp/gradio" not in message
    assert "Traceback" not in message
    listed = client.predict(
        handle_file(str(ASSETS / "experiment_small_shuffled.jsonl")), api_name="/upload_log"
    )
    labels = [label for label, _ in listed["choices"]]
    assert len(labels) == 64 and labels[0].startswith("strong 0c5t · logic3 · K = 16 · logic3-0009")
