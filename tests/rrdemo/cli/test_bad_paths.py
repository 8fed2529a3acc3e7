"""No traceback from either command line on the inputs a careless or hostile user gives: an
output in a folder that does not exist or is a folder, an unreadable or nested settings file,
a settings or submission file without end, a database URL nothing can open. Each is one line on
stderr and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard.cli import main as leaderboard_main
from rrdemo.cli import main as rrdemo_main
from rrdemo.files import MAX_SETTINGS_BYTES
from tests.support.fakes import fake_run


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_outputs_that_cannot_be_written_are_named(tmp_path: Path, capsys) -> None:
    log = fake_run(tmp_path / "run.jsonl", ("0c3t", "2c1t"), task_name="logic3")
    under_a_file = log / "sub.json"  # its folder is a file: nothing can make it
    assert rrdemo_main(["export", str(log), "--submitter", "me", "--out", str(under_a_file)]) == 2
    assert "run.jsonl" in _one_line(capsys)
    for command in ("list", "rank"):
        assert leaderboard_main([command, "--csv", str(tmp_path / "missing" / "x.csv")]) == 2
        assert "x.csv" in _one_line(capsys) or command == "rank"  # pandas names no file
        assert leaderboard_main([command, "--csv", str(tmp_path)]) == 2
        assert "Is a directory" in _one_line(capsys)


@pytest.mark.parametrize(
    "url, reason",
    [
        ("garbage://x", "unknown database kind"),
        ("::::", "it cannot be parsed"),
        ("mysql://user:secret@127.0.0.1:1/db", "is not installed"),
    ],
)
def test_a_database_url_that_cannot_be_opened_is_one_line(url, reason, monkeypatch, capsys):
    monkeypatch.setenv("LEADERBOARD_DB_URL", url)
    assert leaderboard_main(["list"]) == 2
    err = _one_line(capsys)
    assert reason in err and "LEADERBOARD_DB_URL" in err and "secret" not in err


def test_a_submission_without_end_is_read_only_to_the_limit(capsys) -> None:
    assert leaderboard_main(["submit", "/dev/zero"]) == 2
    assert "/dev/zero is larger than the limit of 1048576 bytes" in _one_line(capsys)


def test_settings_files_too_deep_or_too_big_are_refused_before_parsing(
    tmp_path: Path, capsys
) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    nested = tmp_path / "nested.yaml"
    nested.write_text("agents: " + "{a: " * 50_000 + "1" + "}" * 50_000)  # 250 kB
    deep_json = tmp_path / "deep.json"
    deep_json.write_text("[" * 100_000 + "]" * 100_000)
    for path in (deep, nested, deep_json):
        assert rrdemo_main(["run", "--ensemble", str(path), "--task", "logic3"]) == 2
        assert f"{path.name} is nested too deeply to read" in _one_line(capsys)
    big = tmp_path / "big.yaml"
    big.write_text("a" * (10 * 2**20))  # 10 MB: refused from its size, not after a long parse
    assert rrdemo_main(["run", "--ensemble", str(big), "--task", "logic3"]) == 2
    assert f"larger than {MAX_SETTINGS_BYTES >> 10} KiB" in _one_line(capsys)
    assert rrdemo_main(["run", "--ensemble", "/dev/zero", "--task", "logic3"]) == 2
    _one_line(capsys)  # not a regular file: refused before any read
