"""`python -m leaderboard` through real subprocesses: exit codes, stderr reasons, JSON listing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
        "schema_version: version 2 is not supported (this server accepts 3)",
        "results[0]: k (K) = 0 is out of range; allowed 1..4096",
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
