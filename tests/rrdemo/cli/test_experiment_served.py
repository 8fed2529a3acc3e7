"""A sweep over a real served model, end to end: llama-cpp-python serving the offline SmolLM2 on
loopback, the paper's c-sweep (tiny: L = 8, one question) run from one sweep file, `rrdemo
status` on its log, its export grouped with a local run of the same weights, and its dataset
loaded back with `datasets`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

pytest.importorskip(
    "llama_cpp.server.app",
    reason="llama-cpp-python's server is not installed: run scripts/build_llama_cpp_wheel.sh",
)

from rrdemo.backends.llamacpp_server import launch_llama_cpp_server
from rrdemo.backends.registry import REGISTRY, locate_shipped
from rrdemo.cli import main
from rrdemo.report.submission import parse_submission
from tests.support import processes

pytestmark = pytest.mark.slow

ALIAS = "smollm2-q4"
TINY = {"tasks": ["gsm8k"], "strengths": ["strong"], "k": [8], "max_tokens": 8, "n": 1}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with launch_llama_cpp_server(
        locate_shipped("smollm2"), alias=ALIAS, n_ctx=2048, log_path=log, popen=processes.start
    ) as running:
        yield running


def _sweep(folder: Path, name: str, settings: dict) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({**TINY, **settings}))
    return path


def _export(log: Path, capsys) -> dict:
    out = log.with_suffix(".submission.json")
    assert main(["export", str(log), "--submitter", "tester", "--out", str(out)]) == 0
    capsys.readouterr()
    return json.loads(out.read_text())


def test_a_served_c_sweep_runs_reports_exports_and_groups_with_local_rows(server, tmp_path, capsys):
    endpoint = {
        "base_url": server.base_url,
        "served_model": ALIAS,
        "tokenizer": "smollm2",
        "hub_id": REGISTRY["smollm2"].hub_id,
        "stream": False,
        "timeout_s": 120,
        "backoff_s": 0.1,
    }
    configs = ["0c3t", "2c1t", "3c0t"]
    served = _sweep(
        tmp_path,
        "served",
        {"models": ["smol"], "configs": configs, "endpoints": {"smol": endpoint}},
    )
    served_log = tmp_path / "served.jsonl"
    assert main(["experiment", "--sweep", str(served), "--out", str(served_log), "--quiet"]) == 0
    capsys.readouterr()

    assert main(["status", str(served_log), "--json"]) == 0
    statuses = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert sorted(s["label"] for s in statuses) == sorted(configs)
    assert all(s["done"] == s["planned"] == 1 and s["ensemble"] == "smol" for s in statuses)

    local = _sweep(tmp_path, "local", {"models": ["smollm2"], "configs": ["2c1t"]})
    local_log = tmp_path / "local.jsonl"
    assert main(["experiment", "--sweep", str(local), "--out", str(local_log), "--quiet"]) == 0
    served_rows = _export(served_log, capsys)["results"]
    local_rows = _export(local_log, capsys)["results"]
    for path in (served_log, local_log):  # both validate as the leaderboard reads them
        parse_submission(path.with_suffix(".submission.json").read_bytes())
    assert sorted(r["n_corrupted"] for r in served_rows) == [0, 2, 3]
    assert {r["model"] for r in served_rows} == {r["model"] for r in local_rows} == {"smollm2"}
    assert {m for r in served_rows for m in r["agent_models"]} == {"smollm2"}
    assert len({r["config_hash"] for r in served_rows + local_rows}) == 4  # served != local

    import datasets

    folder = tmp_path / "served_dataset"
    assert main(["export", str(served_log), "--dataset", "--out", str(folder)]) == 0
    loaded = datasets.load_dataset(str(folder), split="train", cache_dir=str(tmp_path / "hf"))
    assert loaded.num_rows == 3 * 2 * 3  # conditions x methods x M* trajectories
    assert set(loaded["method"]) == {"MAJ", "RRMaj"}
