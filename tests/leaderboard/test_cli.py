"""`python -m leaderboard` through real subprocesses: exit codes, stderr reasons, JSON listing;
ranking, filters and CSV in process, on the real seeded SQLite board."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from leaderboard import hub_sync, service
from leaderboard.db import run_transaction
from rrdemo.report.submission import SCHEMA_VERSION
from tests.support.samples import encode, paper_row_count, result_row, submission

REPO = Path(__file__).resolve().parents[2]


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "leaderboard", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cli_submit_list_and_moderate(lb_env: str, tmp_path: Path) -> None:
    assert _cli("init").returncode == 0

    good = tmp_path / "good.json"
    good.write_bytes(encode(submission([result_row(), result_row(dataset="logic3")])))
    first = _cli("submit", str(good))
    assert first.returncode == 0, first.stderr
    assert "Accepted as submission #3" in first.stdout and "pending" in first.stdout
    again = _cli("submit", str(good))
    assert again.returncode == 0 and "Already present as submission #3" in again.stdout

    bad = tmp_path / "bad.json"
    bad.write_bytes(encode(submission([result_row(k=0, n_honest=9)], schema_version=2)))
    rejected = _cli("submit", str(bad))
    assert rejected.returncode == 2
    lines = rejected.stderr.strip().splitlines()
    assert lines[0] == "Rejected:"
    assert lines[1:] == [  # every problem, one per line
        "schema_version: version 2 is not supported (this server accepts 4)",
        "results[0]: k (K) = 0 is out of range; allowed 1..32768",
        "results[0]: c + t must equal N: 3 + 9 != 5",
    ]
    assert "Traceback" not in rejected.stderr

    bad.write_bytes(b'{"schema_version": 3, "results": [')
    rejected = _cli("submit", str(bad))
    assert rejected.returncode == 2 and "not valid JSON" in rejected.stderr
    missing = _cli("submit", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "Cannot read" in missing.stderr
    assert "Traceback" not in missing.stderr

    public = json.loads(_cli("list", "--format", "json").stdout)
    assert len(public) == paper_row_count() and {r["status"] for r in public} == {"approved"}
    everything = json.loads(_cli("list", "--format", "json", "--all").stdout)
    mine = [r for r in everything if r["submission_id"] == 3]
    assert [(r["status"], r["dataset"], r["config"]) for r in mine] == [
        ("pending", "gsm8k", "3c2t"),
        ("pending", "logic3", "3c2t"),
    ]
    assert mine[0]["delta"] == 0.25 and mine[0]["rho"] == 0.6

    refused = _cli("approve", "3")
    assert refused.returncode == 2 and "no LEADERBOARD_ADMIN_TOKEN set" in refused.stderr
    wrong = _cli("approve", "3", "--token", "guess", env={"LEADERBOARD_ADMIN_TOKEN": "sesame"})
    assert wrong.returncode == 2 and "token is wrong" in wrong.stderr
    done = _cli("approve", "3", env={"LEADERBOARD_ADMIN_TOKEN": "sesame"})  # token from env
    assert done.returncode == 0 and "now approved" in done.stdout
    public = json.loads(_cli("list", "--format", "json").stdout)
    assert len(public) == paper_row_count() + 2

    table = _cli("list", "--format", "table")
    assert table.returncode == 0 and "3c2t" in table.stdout and "HuggingFaceTB" in table.stdout


# -- ranking, filters and CSV, in process on the seeded board --------------------------------------
def test_rank_orders_the_models_as_the_board_does(lb_env: str, tmp_path: Path, capsys) -> None:
    from leaderboard.cli import main

    out = tmp_path / "ranking.csv"
    assert main(["rank", "--task", "gsm8k", "--strength", "moderate", "--csv", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "Ranked on the paper's tasks:"
    assert printed[1].split()[:3] == ["rank", "model", "source"]
    with out.open(encoding="utf-8") as handle:
        ranked = list(csv.DictReader(handle))
    assert [r["rank"] for r in ranked] == [str(i + 1) for i in range(len(ranked))]
    scores = [float(r["RRMaj % (rho>=0.6)"]) for r in ranked]
    assert len(ranked) == 5 and scores == sorted(scores, reverse=True)
    assert ranked[0]["model"] in printed[2]  # the table shows the same first model

    assert main(["rank", "--format", "json", "--model", ranked[-1]["model"]]) == 0
    (only,) = json.loads(capsys.readouterr().out)
    assert only["model"] == ranked[-1]["model"] and only["rank"] == "1"


def test_list_filters_by_task_config_strength_model_and_band(
    lb_env: str, tmp_path: Path, capsys
) -> None:
    from leaderboard.cli import main

    model = "meta-llama/Llama-3.3-70B-Instruct"
    out = tmp_path / "rows.csv"
    args = ["list", "--format", "json", "--task", "gsm8k", "--config", "3c2t", "--model", model]
    assert main([*args, "--strength", "strong", "--csv", str(out)]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["dataset"], row["config"], row["strength"], row["model"]) == (
        "gsm8k",
        "3c2t",
        "strong",
        model,
    )
    with out.open(encoding="utf-8") as handle:
        (written,) = list(csv.DictReader(handle))
    assert written["model"] == model and float(written["rho"]) == 0.6

    assert main(["list", "--format", "json", "--band", "minority"]) == 0
    minority = json.loads(capsys.readouterr().out)
    assert minority and {r["config"] for r in minority} <= {"1c4t", "2c3t"}


def test_a_filter_outside_the_board_is_refused_with_what_is_allowed(lb_env: str, capsys) -> None:
    from leaderboard.cli import main

    assert main(["list", "--model", "gpt-9"]) == 2
    err = capsys.readouterr().err
    assert "no row has the model 'gpt-9'" in err and "Qwen/Qwen3-30B-A3B" in err
    with pytest.raises(SystemExit):
        main(["rank", "--config", "3c"])
    assert "e.g. 3c2t" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["rank", "--task", "gsm9k"])
    assert "invalid choice: 'gsm9k'" in capsys.readouterr().err
    assert main(["rank", "--task", "track7", "--config", "9c0t"]) == 0
    assert "No row matches these filters." in capsys.readouterr().err


def test_a_cli_on_another_database_journals_beside_it_not_into_the_apps_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`LEADERBOARD_DB_URL` elsewhere, run from the app's folder: nothing lands in `./data`, and
    the default board, rebuilt from its own journal, never shows the other board's submission."""
    app_folder, other = tmp_path / "app", tmp_path / "elsewhere"
    app_folder.mkdir()
    other.mkdir()
    doc = tmp_path / "mine.json"
    doc.write_bytes(encode(submission(submitter="tester")))
    env = {k: v for k, v in os.environ.items() if k not in ("RRDEMO_DATA_DIR", "SPACE_ID")}
    env |= {"LEADERBOARD_DB_URL": f"sqlite:///{other / 'test.db'}", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "leaderboard", "submit", str(doc)],
        cwd=app_folder, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0 and "Accepted" in done.stdout, done.stderr
    assert not (app_folder / "data").exists()
    assert len(list((other / "test-journal" / "submissions").glob("*.json"))) == 1

    monkeypatch.chdir(app_folder)  # the app's default board: ./data/leaderboard.db
    for name in ("RRDEMO_DATA_DIR", "LEADERBOARD_DB_URL", "SPACE_ID"):
        monkeypatch.delenv(name, raising=False)
    store = hub_sync.open_store()
    try:
        rows = run_transaction(store.factory, lambda s: service.board_rows(s, include_all=True))
        assert "tester" not in {row.submitter for row in rows}
        assert store.journal.folder == Path("data") / "leaderboard-journal"
    finally:
        store.factory.kw["bind"].dispose()


def test_submit_help_names_the_schema_version_it_accepts() -> None:
    shown = _cli("submit", "--help")
    assert f"schema version {SCHEMA_VERSION}" in shown.stdout
    assert "1 or 2" not in _cli("--help").stdout
