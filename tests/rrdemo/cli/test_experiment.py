"""`rrdemo experiment`: ensemble files (local and served agents) in sweeps, and sizes refused
before anything is built."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from rrdemo.cli import main
from tests.support.model_list import model_list_server

ROOT = Path(__file__).resolve().parents[3]

ENSEMBLE = """
endpoints:
  box: {base_url: "BASE_URL", served_model: smol, tokenizer: smollm2}
agents:
  - {model: smollm2, corrupted: true}
  - {backend: openai, endpoint: box, model: smol-served, corrupted: true}
  - {model: smollm2, count: 3}
"""


@pytest.fixture(scope="module")
def base_url():
    """A loopback server listing the served models these tests' files name."""
    with model_list_server(["smol", "smollm2-q4", "llama70b"]) as url:
        yield url


def test_a_sweep_takes_an_ensemble_file_with_served_agents(tmp_path, capsys, base_url):
    path = tmp_path / "mixed.yaml"
    path.write_text(ENSEMBLE.replace("BASE_URL", base_url))
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
    """`999999999c1t` is refused from its integers: no agent is built, nothing is written.

    Not timed: a run that built the agents would fail under the memory limit with exit 1 and
    a MemoryError, not exit 2 with the message; the timeout only ends a hang (Python's start-up
    takes seconds, more on a loaded machine)."""
    out = tmp_path / "r.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "rrdemo", "experiment", "--configs", "999999999c1t", "--dry-run",
         "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, preexec_fn=_six_gigabytes,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip().splitlines() == [
        "rrdemo experiment: error: N (c + t) of config '999999999c1t' is 1000000000; at most 64 "
        "is allowed (RRDEMO_MAX_AGENTS)"
    ]
    assert not out.exists()


SERVED_RUN = """
run: {k: 8, max_tokens: 64, strength: moderate}
agents:
  - {model: smollm2, corrupted: true}
  - backend: openai
    model: smollm2@llama
    base_url: BASE_URL
    served_model: smollm2-q4
    tokenizer: smollm2
    hub_id: HuggingFaceTB/SmolLM2-135M-Instruct
    count: 2
"""


def _conditions(stdout: str) -> list[list[str]]:
    return [line.split("\t") for line in stdout.splitlines() if line.strip()]


def test_an_ensemble_file_is_the_run_from_a_folder_outside_the_repo(tmp_path, base_url):
    """The file's `run:` block is what runs (K 8, L 64, moderate only), nothing else is added,
    and the plan names the models, where each setting came from and what it will cost."""
    (tmp_path / "f.yaml").write_text(SERVED_RUN.replace("BASE_URL", base_url))
    done = subprocess.run(
        [sys.executable, "-m", "rrdemo", "experiment", "--ensemble", "f.yaml", "--n", "2",
         "--dry-run", "--tokens-per-second", "10", "--out", "r.jsonl"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    [condition] = _conditions(done.stdout)
    assert condition[1:8] == [
        "smollm2*,smollm2@llama,smollm2@llama",
        "1c2t",
        "moderate",
        "K=8",
        "M*=3",
        "L=64",
        "2 questions",
    ]
    settings = dict(
        line.split(maxsplit=1) for line in done.stderr.splitlines() if line.startswith("  ")
    )
    assert settings["k"].split() == ["8", "file", "f.yaml"]
    assert settings["max_tokens"].split() == ["64", "file", "f.yaml"]
    assert settings["strengths"].split() == ["moderate", "file", "f.yaml"]
    assert settings["n"].split() == ["2", "flag"] and settings["seed"].split() == ["0", "default"]
    assert "weights HuggingFaceTB/SmolLM2-135M-Instruct" in done.stderr
    # 2 questions x (MAJ + RRMaj) x M* = 3 texts of at most L = 64 tokens
    assert "decode at most 768 tokens" in done.stderr
    assert "at 10 tokens/s about 77 s of decoding" in done.stderr
    assert not (tmp_path / "r.jsonl").exists()


def _dry_run(tmp_path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["experiment", *args, "--dry-run", "--out", str(tmp_path / "r.jsonl")])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_flags_override_the_file_and_the_plan_says_so(tmp_path, capsys, base_url):
    path = tmp_path / "f.yaml"
    path.write_text(SERVED_RUN.replace("BASE_URL", base_url))
    code, out, err = _dry_run(tmp_path, capsys, "--ensemble", str(path), "--k", "4", "--n", "1")
    assert code == 0, err
    [condition] = _conditions(out)
    assert condition[4:7] == ["K=4", "M*=3", "L=64"]
    assert any(line.split() == ["k", "4", "flag"] for line in err.splitlines())


def test_two_ensemble_files_that_disagree_on_a_setting_are_refused(tmp_path, capsys):
    (tmp_path / "a.yaml").write_text("run: {k: 8}\nagents: [{model: smollm2, count: 2}]")
    (tmp_path / "b.yaml").write_text("run: {k: 16}\nagents: [{model: smollm2, corrupted: true}]")
    files = ["--ensemble", str(tmp_path / "a.yaml"), "--ensemble", str(tmp_path / "b.yaml")]
    code, _, err = _dry_run(tmp_path, capsys, *files)
    assert code == 2 and "b.yaml sets k to [16] but a.yaml to [8]" in err
    code, out, err = _dry_run(tmp_path, capsys, *files, "--k", "4", "--n", "1")
    assert code == 0, err
    # neither file names a strength: each runs RunConfig's, the strong injection alone
    assert [c[3:5] for c in _conditions(out)] == [["strong", "K=4"]] * 2


def served_sweep_block() -> str:
    """The YAML block of docs/serving.md that sweeps the paper's configs over an endpoint."""
    text = (ROOT / "docs" / "serving.md").read_text()
    blocks = re.findall(r"^```yaml\n(.*?)^```", text, re.S | re.M)
    return next(b for b in blocks if "configs:" in b and "endpoints:" in b)


def test_the_served_sweep_of_docs_serving_dry_runs_as_written(
    tmp_path, capsys, base_url, monkeypatch
):
    monkeypatch.setenv("VLLM_API_KEY", "key")  # the check of its endpoint sends the key
    path = tmp_path / "sweep_served.yaml"  # its server's address made this machine's
    path.write_text(served_sweep_block().replace("http://GPU-HOST:8000/v1", base_url))
    code, out, err = _dry_run(tmp_path, capsys, "--sweep", str(path))
    assert code == 0, err
    conditions = _conditions(out)
    assert {c[1] for c in conditions} == {"llama70b"}
    assert len({c[2] for c in conditions}) >= 3
    assert f"served: llama70b: 'llama70b' at {base_url}" in err
    assert "estimate:" in err


def test_the_served_sweep_of_docs_serving_dry_runs_with_no_api_key(tmp_path, capsys, monkeypatch):
    """Planning needs no key and no server: the block as written (its host is a placeholder)
    dry-runs with VLLM_API_KEY unset and says its endpoint went unchecked; the run itself stops
    there, before a log is begun."""
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    path = tmp_path / "sweep_served.yaml"
    path.write_text(served_sweep_block())
    code, out, err = _dry_run(tmp_path, capsys, "--sweep", str(path))
    assert code == 0, err
    assert (
        "not checked: served agent 'llama70b': the API key variable VLLM_API_KEY is not set" in err
    )
    assert {c[1] for c in _conditions(out)} == {"llama70b"} and "estimate" in err
    log = tmp_path / "run.jsonl"
    code = main(["experiment", "--sweep", str(path), "--out", str(log), "--quiet"])
    assert code == 2 and "VLLM_API_KEY is not set" in capsys.readouterr().err
    assert not log.exists()


def test_a_served_model_in_a_sweep_carries_its_weights(tmp_path):
    from rrdemo.cli.experiment import served_models
    from rrdemo.runs.spec import plan_sweep

    raw = {
        "models": ["box", "smollm2"],
        "configs": ["1c2t"],
        "strengths": ["strong"],
        "k": 8,
        "max_tokens": 8,
        "n": 1,
        "endpoints": {
            "box": {"base_url": "http://h/v1", "hub_id": "org/weights", "revision": "abc"}
        },
    }
    served = served_models(raw, {})
    plan = plan_sweep(raw, served={name: agent.seat() for name, agent in served.items()})
    box, local = (c.config.agents for c in plan.conditions)
    assert [(a.model, a.backend, a.hub_id, a.revision, a.corrupted) for a in box] == [
        ("box", "openai", "org/weights", "abc", True),
        *[("box", "openai", "org/weights", "abc", False)] * 2,
    ]
    assert all(a.hub_id is None and a.backend != "openai" for a in local)
    assert "hub_id" not in plan.conditions[1].config.to_dict()["agents"][0]  # hashes as before


def test_settings_beyond_the_paper_in_a_run_block_are_the_run_and_flags_override(tmp_path, capsys):
    """A `run:` block's settings beyond the paper (read off their declarations) set the sweep as
    the paper's do: the condition is the one their flags give, each shown with its file."""
    agents = "agents: [{model: smollm2, corrupted: true}, {model: smollm2, count: 2}]"
    path, bare = tmp_path / "f.yaml", tmp_path / "bare.yaml"
    path.write_text(f"run: {{k: 8, turn_policy: sentence, k_min: 2, eos_policy: pass}}\n{agents}")
    bare.write_text(agents)
    code, out, err = _dry_run(tmp_path, capsys, "--ensemble", str(path), "--n", "1")
    assert code == 0, err
    settings = dict(line.split(maxsplit=1) for line in err.splitlines() if line.startswith("  "))
    assert settings["turn_policies"].split() == ["sentence", "file", "f.yaml"]
    assert settings["eos_policy"].split() == ["pass", "file", "f.yaml"]
    assert settings["k_min"].split() == ["2", "file", "f.yaml"]
    flags = ["--k", "8", "--turn-policies", "sentence", "--k-min", "2", "--eos-policy", "pass"]
    code, flagged, err = _dry_run(tmp_path, capsys, "--ensemble", str(bare), "--n", "1", *flags)
    assert code == 0, err
    assert _conditions(out) == _conditions(flagged)  # same config, same condition key
    many = ["--turn-policies", "fixed,sentence"]
    code, out, err = _dry_run(tmp_path, capsys, "--ensemble", str(path), "--n", "1", *many)
    assert code == 0, err
    assert len(_conditions(out)) == 2
    assert ["turn_policies", "fixed,sentence", "flag"] in [
        line.split() for line in err.splitlines()
    ]
