"""Files the app writes for visitors (named by content, written whole) and the sweep of gradio's
folder (old uploads, outputs and half-written uploads go; young files and foreign names stay).
On a live app: test_security.py (300 CSV downloads, a stale upload swept at start-up)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from ui.scratch import lifespan, publish, publish_file, sweep

OLD = time.time() - 3600


def _aged(path: Path, when: float = OLD) -> Path:
    os.utime(path, (when, when))
    return path


def test_the_same_content_is_one_file_and_other_content_another(tmp_path: Path) -> None:
    first = publish(b"a,b\n1,2\n", "leaderboard.csv", tmp_path)
    assert Path(first).read_bytes() == b"a,b\n1,2\n" and Path(first).name == "leaderboard.csv"
    assert publish(b"a,b\n1,2\n", "leaderboard.csv", tmp_path) == first
    second = publish(b"a,b\n3,4\n", "leaderboard.csv", tmp_path)
    assert second != first and len(list(tmp_path.iterdir())) == 2
    assert not [p for p in tmp_path.rglob(".*")]  # no staging file left
    log = tmp_path / "elsewhere" / "sweep.jsonl"
    log.parent.mkdir()
    log.write_text('{"kind": "header"}\n')
    copy = publish_file(log, tmp_path / "served")
    assert Path(copy).name == "sweep.jsonl" and Path(copy).read_text() == log.read_text()


def test_old_uploads_outputs_and_partial_uploads_are_swept_and_nothing_else(
    tmp_path: Path,
) -> None:
    old = publish(b"old", "upload.json", tmp_path)
    _aged(Path(old))
    _aged(Path(old).parent)
    young = publish(b"young", "leaderboard.csv", tmp_path)
    emptied = tmp_path / ("e" * 64)  # gradio's schedule deleted its file long ago
    emptied.mkdir()
    _aged(emptied)
    partial = tmp_path / "tmpab12cd"
    partial.write_bytes(b"half an upload")
    _aged(partial)
    fresh_partial = tmp_path / "tmpfresh"
    fresh_partial.write_bytes(b"uploading now")
    foreign = tmp_path / "notes"
    foreign.mkdir()
    _aged(foreign)
    mixed = Path(publish(b"mixed", "a.txt", tmp_path)).parent
    _aged(mixed / "a.txt")
    (mixed / "b.txt").write_text("young")
    gone = sweep(tmp_path, age=900)
    assert not Path(old).parent.exists() and not emptied.exists() and not partial.exists()
    assert Path(young).exists() and fresh_partial.exists() and foreign.exists()
    assert not (mixed / "a.txt").exists() and (mixed / "b.txt").exists()
    assert gone == 5  # two old files, a half upload, two folders (a third keeps a young file)
    assert sweep(tmp_path / "missing", age=900) == 0


def test_the_lifespan_sweeps_when_the_server_starts(tmp_path: Path) -> None:
    left = publish(b"left by a killed server", "upload.jsonl", tmp_path)
    _aged(Path(left))
    _aged(Path(left).parent)

    async def start_and_stop() -> None:
        async with lifespan(3600, 900, folder=lambda: tmp_path)(app=None):
            assert not Path(left).exists()

    asyncio.run(start_and_stop())
