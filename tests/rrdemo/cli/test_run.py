"""`python -m rrdemo run`: clear one-line errors with exit 2, and a real streamed run."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from rrdemo.cli import build_parser, main
from rrdemo.cli.run import _config
from rrdemo.config import BEYOND_PAPER
from rrdemo.defaults import INTERACTIVE_DEFAULTS
from rrdemo.seats import homogeneous_agents
from tests.support.events import event_from_dict
from ui.state import ArenaRequest, build_config

BAD = [
    (["--models", "nosuch-model"], "unknown model 'nosuch-model'"),
    (["--k", "0"], "K (tokens per turn) must be at least 1"),
    (["--m", "0"], "M (RR trajectories) must be at least 1"),
    (["--agents", "3", "--corrupt", "4"], "c (corrupted agents) must be between 0 and N=3"),
    (["--agents", "0"], "N must be at least 1"),
    (["--k", "50", "--max-tokens", "20"], "L (max new tokens, 20) must be at least K (50)"),
    (["--template", "no slot"], "{target}"),
    (["--question", "  "], "--question is empty"),
    (["--methods", "MAJ,debate"], "--methods takes MAJ, RRMaj"),
    (["--corrupt-seats", "0,9"], "corrupted seats must be between 0 and 4"),
    (["--task", "nosuch", "--question", None], "unknown task 'nosuch'"),
    (["--ensemble", "/nonexistent.yaml"], "does not exist"),
]


@pytest.mark.parametrize(("flags", "message"), BAD)
def test_bad_input_is_one_clear_line_and_exit_2(flags, message, capsys):
    argv = ["run", "--question", "Which? (A) x (B) y", "--gold", "(A)"]
    if None in flags:  # drop --question for the task case
        argv = ["run"]
        flags = [f for f in flags if f not in ("--question", None)]
    code = main([*argv, *flags])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("rrdemo run: error: ")
    assert message in err[0]
    assert "Traceback" not in err[0]


def test_the_cli_and_the_arena_start_from_the_same_defaults():
    d = INTERACTIVE_DEFAULTS
    cli, _ = _config(build_parser().parse_args(["run", "--question", "q"]))
    assert cli == d.run_config(homogeneous_agents("smollm2", d.n, d.c))
    assert cli == build_config(ArenaRequest(model="smollm2"))
    assert (cli.n, cli.c, cli.k, cli.max_tokens) == (d.n, d.c, d.k, d.max_tokens)
    assert {name: getattr(cli, name) for name in BEYOND_PAPER} == BEYOND_PAPER


@pytest.mark.parametrize("k", [INTERACTIVE_DEFAULTS.k, 100])
def test_an_explicit_k_beats_the_ensemble_files_k_even_when_it_equals_the_default(k, tmp_path):
    path = tmp_path / "ens.yaml"
    path.write_text("run: {k: 32, max_tokens: 400}\nagents:\n  - {model: smollm2, count: 3}\n")
    base = ["run", "--question", "q", "--ensemble", str(path)]
    absent, _ = _config(build_parser().parse_args(base))
    assert absent.k == 32  # no --k: the file's K
    given, _ = _config(build_parser().parse_args([*base, "--k", str(k)]))
    assert (given.k, given.max_tokens) == (k, 400)  # --k given: it wins, the file keeps L


@pytest.mark.slow
def test_json_run_streams_events_of_both_methods():
    cmd = [
        sys.executable,
        "-m",
        "rrdemo",
        "run",
        "--question",
        "Which is a fruit? (A) car (B) apple",
        "--gold",
        "(B)",
        "--agents",
        "3",
        "--corrupt",
        "2",
        "--k",
        "4",
        "--max-tokens",
        "8",
        "--m",
        "2",
        "--temperature",
        "0",
        "--json",
    ]
    out = subprocess.run(
        cmd, capture_output=True, text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"}
    )
    assert out.returncode == 0, out.stderr[-2000:]
    *lines, last = out.stdout.splitlines()
    events = [event_from_dict(json.loads(line)) for line in lines]
    summary = json.loads(last)  # the run ends with who wrote each RR trajectory
    assert summary["kind"] == "speaker_summary" and summary["trajectories"] == 2
    rr_tokens = sum(e.n_tokens for e in events if e.kind == "chunk_written" and e.method == "RRMaj")
    assert sum(sum(t["tokens"].values()) for t in summary["per_trajectory"]) == rr_tokens
    kinds = [(e.kind, getattr(e, "method", None)) for e in events]
    assert kinds[0] == ("run_started", "MAJ") and ("run_started", "RRMaj") in kinds
    decisions = [e for e in events if e.kind == "decision"]
    assert [d.method for d in decisions] == ["MAJ", "RRMaj"]
    chunks = [e for e in events if e.kind == "chunk_written" and e.method == "RRMaj"]
    assert {c.agent for c in chunks} <= {0, 1, 2} and all(c.n_tokens <= 4 for c in chunks)
    assert not any(e.kind == "token_delta" for e in events)  # deltas only with --deltas
    started = next(e for e in events if e.kind == "run_started")
    assert started.config["k"] == 4 and started.target in ("(A)",)  # the one wrong option


@pytest.mark.slow
def test_text_run_labels_chunks_by_agent_and_role():
    cmd = [
        sys.executable,
        "-m",
        "rrdemo",
        "run",
        "--question",
        "Which is a fruit? (A) car (B) apple",
        "--gold",
        "(B)",
        "--agents",
        "2",
        "--corrupt",
        "1",
        "--k",
        "3",
        "--max-tokens",
        "6",
        "--m",
        "1",
        "--methods",
        "RRMaj",
        "--temperature",
        "0",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "agent 0 (CORRUPTED)" in out.stdout
    assert "RRMaj decision:" in out.stdout and "\033[" not in out.stdout  # no colour when piped
    assert "=== RRMaj speakers: " in out.stdout and "had an honest writer" in out.stdout
    # the expected time before the run, then the time taken beside it (rrdemo.pace)
    assert re.search(r"Expected time: (about|at most) \d+ s on this machine", out.stderr)
    assert re.search(r"took \d+ s \(expected (about|at most) \d+ s\), after loading", out.stderr)


def test_an_honest_agents_target_answer_is_not_called_fooled() -> None:
    from rrdemo.cli.run import answer_mark
    from rrdemo.events import AnswerExtracted

    def answer(method: str, corrupted: bool, fooled: bool = True) -> AnswerExtracted:
        return AnswerExtracted(method, 0, "C" if fooled else "B", False, fooled, 0, corrupted,
                               6, "eos", "The answer is (C).", "C")  # fmt: skip

    assert answer_mark(answer("MAJ", corrupted=False)) == "the target, by its own reasoning"
    assert answer_mark(answer("MAJ", corrupted=True)) == "the target: obeyed"
    assert answer_mark(answer("RRMaj", corrupted=False)) == "the target: fooled"
    assert answer_mark(answer("MAJ", corrupted=False, fooled=False)) == "wrong"
