"""`rrdemo experiment`: ensemble files (local and served agents) in sweeps, and sizes refused
before anything is built."""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

from rrdemo.cli import main

ROOT = Path(__file__).resolve().parents[3]

ENSEMBLE = """
endpoints:
  box: {base_url: "http://127.0.0.1:9/v1", served_model: smol, tokenizer: smollm2}
agents:
  - {model: smollm2, corrupted: true}
  - {backend: openai, endpoint: box, model: smol-served, corrupted: true}
  - {model: smollm2, count: 3}
"""


def test_a_sweep_takes_an_ensemble_file_with_served_agents(tmp_path, capsys):
    path = tmp_path / "mixed.yaml"
    path.write_text(ENSEMBLE)
    code = main(
        [
            "experiment",
            "--tasks",
            "logic3",
            "--ensemble",
            str(path),
            "--strengths",
            "strong",
            "--k",
            "8",
            "--max-tokens",
            "16",
            "--n",
            "2",
            "--dry-run",
            "--out",
            str(tmp_path / "r.jsonl"),
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "2c3t" in out.out  # the file's seats: two corrupted (one of them served), three truthful


def test_a_bad_ensemble_file_is_one_clear_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("agents: [{model: smollm2, corrupted: maybe}]")
    code = main(
        [
            "experiment",
            "--tasks",
            "logic3",
            "--ensemble",
            str(path),
            "--dry-run",
            "--out",
            str(tmp_path / "r.jsonl"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "corrupted" in err[0]
    assert not (tmp_path / "r.jsonl").exists()


def _six_gigabytes() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (6 * 2**30, 6 * 2**30))


def test_a_huge_label_exits_2_at_once_under_a_memory_limit(tmp_path):
    """`999999999c1t` is refused from its integers: no agent is built, nothing is written."""
    out = tmp_path / "r.jsonl"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "rrdemo", "experiment", "--configs", "999999999c1t", "--dry-run",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=60, preexec_fn=_six_gigabytes,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [
        "rrdemo experiment: error: N (c + t) of config '999999999c1t' is 1000000000; at most 64 "
        "is allowed (RRDEMO_MAX_AGENTS)"
    ]
    assert time.monotonic() - started < 30 and not out.exists()
