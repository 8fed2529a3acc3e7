"""The paper-scale study (assets/paper_scale/study.yaml): its dry run needs no key and no server
and states tokens, time and GPU hours from the file's stated throughput; the same file runs end
to end (run, status, build) with SmolLM2 standing in behind a real llama.cpp server."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rrdemo.cli import main

ROOT = Path(__file__).resolve().parents[3]
STUDY = ROOT / "assets" / "paper_scale" / "study.yaml"
ALIAS = "smollm2-q4"


def test_the_dry_run_states_tokens_time_and_gpu_hours_with_no_key(capsys, monkeypatch) -> None:
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    assert main(["study", str(STUDY), "run", "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "not checked: served agent 'llama70b'" in err
    # 6 tasks x 5 configs x 128 questions; MAJ and RRMaj decode at most M x L = 5,120 each
    assert "for 3,840 units, 21.8 GPU hours on 4 GPU(s), 39,321,600 tokens decoded" in err
    assert "the study's stated server throughput (assumed, not measured here" in err
    assert main(["study", str(STUDY), "run", "--dry-run", "--rate", "4000"]) == 0
    assert "at most 2.7 h for 3,840 units" in capsys.readouterr().err


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    pytest.importorskip(
        "llama_cpp.server.app",
        reason="llama-cpp-python's server is not installed: run scripts/build_llama_cpp_wheel.sh",
    )
    from rrdemo.backends.llamacpp_server import launch_llama_cpp_server
    from rrdemo.backends.registry import locate_shipped
    from tests.support import processes

    log = tmp_path_factory.mktemp("llama") / "server.log"
    with launch_llama_cpp_server(
        locate_shipped("smollm2"), alias=ALIAS, n_ctx=2048, log_path=log, popen=processes.start
    ) as running:
        yield running


@pytest.mark.slow
def test_the_study_runs_end_to_end_with_a_stand_in_server(server, tmp_path, capsys, monkeypatch):
    """The file as committed, its endpoint pointed at the stand-in and its sizes made tiny."""
    monkeypatch.setenv("VLLM_API_KEY", "stand-in")  # sent; the stand-in asks for none
    data = yaml.safe_load(STUDY.read_text())
    endpoint = data["settings"]["endpoints"]["llama70b"]
    endpoint.update(base_url=server.base_url, served_model=ALIAS, tokenizer="smollm2")
    endpoint.update(timeout_s=120, backoff_s=0.1)
    data["settings"].update(tasks=["gsm8k"], n=1, k=[8], max_tokens=8)
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["study", str(path), "run", "--quiet", "--workers", "2"]) == 0
    capsys.readouterr()
    assert main(["study", str(path), "status"]) == 0
    out = capsys.readouterr().out
    assert "all 5 conditions" in out and "time left: 0 s, no units left" in out
    assert main(["study", str(path), "build"]) == 0
    assert (tmp_path / "report" / "report.md").is_file()
