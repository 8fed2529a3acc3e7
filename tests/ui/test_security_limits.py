"""What one visitor can leave behind or hold, against the real app on a real port: files (300 CSV
downloads, uploads a killed server left), the queue (a flood of replays while another visitor
reads), values of the wrong kind (never `"error": null`, never an error class), and a sweep whose
data folder is outside the working directory and the temp folder (`/data/rrdemo` on a Space).
Scripted agents stand in for models; nothing is loaded."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rrdemo.gallery import load_gallery
from tests.support.fakes import FakeBackend, FakePool, fake_run, obeys_injection
from tests.support.served import HTTP_TIMEOUT_S, ServedApp, app_client, serve_app
from ui.queue_limits import REPLAY_PER_CLIENT
from ui.state import ARENA_FIELDS, ArenaRequest
from ui.uploads import UNREADABLE

TINY = ArenaRequest(model="smollm2", n=3, c=1, k=8, m=0, max_tokens=16, task="logic3")
HOUR_AGO = time.time() - 3600


def _hashed(folder: Path) -> set[str]:
    """The per-content folders in gradio's upload folder."""
    return {p.name for p in folder.iterdir() if p.is_dir() and len(p.name) == 64}


@pytest.fixture(scope="module")
def uploads(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("gradio-uploads")


@pytest.fixture(scope="module")
def left(uploads: Path) -> dict[str, Path]:
    """What a killed server left in gradio's folder an hour ago, and a file uploaded just now."""
    stale = uploads / ("a" * 64)
    stale.mkdir()
    (stale / "run.jsonl").write_text("{}")
    partial = uploads / "tmp_half_upload"
    partial.write_bytes(b"half")
    young = uploads / ("b" * 64)
    young.mkdir()
    (young / "run.jsonl").write_text("{}")
    for path in (stale / "run.jsonl", stale, partial):
        os.utime(path, (HOUR_AGO, HOUR_AGO))
    return {"stale": stale, "partial": partial, "young": young}


@pytest.fixture(scope="module")
def served(tmp_path_factory, uploads: Path, left) -> Iterator[ServedApp]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GRADIO_TEMP_DIR", str(uploads))  # read by gradio when the app is built
        pool = FakePool(FakeBackend("smollm2", obeys_injection))  # a registry name, fake agents
        yield from serve_app(pool, tmp_path_factory.mktemp("app"))


def _post(url: str, api: str, data: list, address: str = "10.9.0.1"):
    import httpx

    return httpx.post(
        f"{url}gradio_api/call/{api}",
        json={"data": data},
        headers={"X-Forwarded-For": address},
        timeout=HTTP_TIMEOUT_S,
    )


def _reply(url: str, api: str, data: list) -> str:
    """The whole reply to one raw call: the refusal (HTTP 422) or the streamed result."""
    import httpx

    posted = _post(url, api, data)
    if posted.status_code != 200:
        return posted.text
    event = posted.json()["event_id"]
    return httpx.get(f"{url}gradio_api/call/{api}/{event}", timeout=HTTP_TIMEOUT_S).text


def test_what_a_killed_server_left_is_swept_at_start(served: ServedApp, left) -> None:
    assert not left["stale"].exists() and not left["partial"].exists()
    assert left["young"].exists()  # younger than the age (15 minutes): still someone's


@pytest.mark.slow
def test_300_csv_downloads_leave_one_file(served: ServedApp, uploads: Path) -> None:
    import httpx

    client = app_client(served.url, download_files=False)
    before = _hashed(uploads)
    paths = {
        client.predict("all", "all", "all", "all", api_name="/leaderboard_csv")["path"]
        for _ in range(300)
    }
    assert len(paths) == 1  # the same rows: the same file, handed out 300 times
    assert len(_hashed(uploads) - before) == 1
    (path,) = paths
    text = httpx.get(f"{served.url}gradio_api/file={path}", timeout=HTTP_TIMEOUT_S).text
    assert text.startswith("dataset,") or "dataset" in text.splitlines()[0]


def test_a_flood_of_replays_from_one_client_leaves_other_clients_served(
    served: ServedApp, monkeypatch
) -> None:
    monkeypatch.setenv("RRDEMO_PROXY_HOPS", "1")
    setting = load_gallery().settings[0]
    choice = f"0/{setting.questions[0]}"
    codes, refusals = [], set()
    for _ in range(300):
        posted = _post(served.url, "replay", [choice], "10.8.0.1")
        codes.append(posted.status_code)
        if posted.status_code == 422:
            refusals.add(posted.json()["detail"][0]["message"])
    # Each replay plays about 12 s: while the flood is posted, this client holds its 2 slots.
    assert codes.count(200) < 20 and codes.count(422) == len(codes) - codes.count(200)
    assert refusals == {
        f"You already have {REPLAY_PER_CLIENT} replays waiting or playing: wait for one to "
        "finish (or press Stop), then start another."
    }
    # Another visitor, meanwhile: every read answers, and their own replay plays.
    other = app_client(served.url, download_files=False, headers={"X-Forwarded-For": "10.8.0.2"})
    answered = [other.predict(0.03, 0.4, 100, 1000, api_name="/theory")[1] for _ in range(20)]
    assert sum("66.0%" in text for text in answered) == 20
    _, board, _ = other.predict("all", "all", "all", "all", api_name="/leaderboard_refresh")
    assert board["data"]
    assert other.submit(choice, api_name="/replay").result(timeout=120)


def test_values_of_the_wrong_kind_are_named_never_null(served: ServedApp, tmp_path) -> None:
    run = [getattr(TINY, name) for name in ARENA_FIELDS]
    n_at = ARENA_FIELDS.index("n")
    replies = {}
    for label, value in (("text", "abc"), ("nothing", None), ("a list", [3]), ("nan", "NaN")):
        values = [*run]
        values[n_at] = value
        replies[label] = _reply(served.url, "run", values)
    replies["30 values"] = _reply(served.url, "run", [*run, *run[:7]])
    replies["short sweep"] = _reply(served.url, "sweep", [["logic3"], "smollm2"])
    replies["admin 1.5"] = _reply(served.url, "leaderboard_approve", ["sesame", 1.5, ""])
    replies["admin id text"] = _reply(served.url, "leaderboard_approve", ["sesame", "two", ""])
    replies["server file"] = _reply(served.url, "leaderboard_submit", [{"path": "/etc/passwd"}])
    replies["a path"] = _reply(served.url, "leaderboard_submit", ["/etc/passwd"])
    replies["replay list"] = _reply(served.url, "replay", [["0/x"]])
    for label, reply in replies.items():
        assert '"error": null' not in reply and "Error)" not in reply, (label, reply)
        assert "Traceback" not in reply, label
    assert "N agents must be a number, got a text." in replies["text"]
    assert "This endpoint takes 23 values, got 30" in replies["30 values"]
    assert "This endpoint takes 9 values, got 2" in replies["short sweep"]
    assert "submission # must be a whole number, got 1.5." in replies["admin 1.5"]
    assert "send a file uploaded to this app" in replies["server file"]
    assert replies["server file"] == replies["a path"]


def test_unreadable_and_too_deep_uploads_get_a_message(served: ServedApp, tmp_path) -> None:
    import httpx
    from gradio_client import handle_file

    nameless = [("files", ("", b"{}", "application/json"))]
    posted = httpx.post(served.url + "gradio_api/upload", files=nameless, timeout=HTTP_TIMEOUT_S)
    assert posted.status_code == 400 and posted.json()["detail"] == UNREADABLE
    log = fake_run(tmp_path / "run.jsonl", ("0c3t",), task_name="logic3")
    header = log.read_text().splitlines()[0]
    deep = tmp_path / "deep.jsonl"
    deep.write_text(header + "\n" + "[" * 500_000 + "]" * 500_000 + "\n")
    client = app_client(served.url, download_files=False)
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError) as refused:
        client.predict(handle_file(str(deep)), api_name="/upload_log")
    message = str(refused.value)
    assert "nested too deeply" in message or "deep.jsonl" in message, message
    assert "RecursionError" not in message and "Traceback" not in message


def _outside() -> Path:
    """A writable folder outside the working directory and the temp folder, as `/data` is."""
    cwd, tmp = Path.cwd().resolve(), Path(tempfile.gettempdir()).resolve()
    for base in (Path("/var/tmp"), Path.home() / ".cache", Path("/dev/shm")):
        try:
            base.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(prefix="rrdemo-data-", dir=base)).resolve()
        except OSError:
            continue
        if not folder.is_relative_to(cwd) and not folder.is_relative_to(tmp):
            return folder
        shutil.rmtree(folder)
    pytest.fail("no writable folder outside the working directory and the temp folder")


def test_a_sweep_with_its_data_folder_anywhere_returns_its_log(served: ServedApp, monkeypatch):
    import httpx

    data = _outside()
    try:
        monkeypatch.setenv("RRDEMO_DATA_DIR", str(data / "rrdemo"))
        client = app_client(served.url, download_files=False)
        settings = [["logic3"], "smollm2", "0c1t,1c0t", ["strong"], 4, 8, 1, 0, ["static"]]
        result = client.predict(*settings, api_name="/sweep")
        status, log_file = result[0], result[3]
        assert status.startswith("2 / 2 question runs done")
        written = list((data / "rrdemo" / "experiments").glob("sweep-*.jsonl"))
        assert len(written) == 1
        served_text = httpx.get(
            f"{served.url}gradio_api/file={log_file['path']}", timeout=HTTP_TIMEOUT_S
        ).text
        assert served_text == written[0].read_text()
    finally:
        shutil.rmtree(data)
