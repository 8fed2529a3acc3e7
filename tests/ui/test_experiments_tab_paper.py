"""The Experiments tab sets a sweep beside the paper: the pure table builder on a real sweep log
(scripted agents), and the tab served by a real gradio server, called through gradio_client."""

from __future__ import annotations

import contextlib
import socket
import threading

import gradio as gr
import pytest

from rrdemo.report.paper.beside import PAPER, RUN
from rrdemo.report.paper.main_tables import main_lines
from tests.support.fakes import FakeBackend, FakePool, obeys_injection
from tests.support.served import app_client
from ui.experiments_tab import (
    PAPER_COLUMNS,
    build_experiments_tab,
    paper_beside,
    results_frame,
    run_sweep,
    sweep_settings,
)


def _sweep(configs: str = "0c5t,3c2t", k: int = 4):
    settings = sweep_settings(["logic3"], "smollm2", configs, ["strong"], k, 16, 2, 0)
    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    steps = list(run_sweep(settings, pool, threading.Event(), every=0.05))
    return results_frame(steps[-1][2])


def test_each_setting_of_the_sweep_gets_the_papers_lines() -> None:
    frame = _sweep()
    table, note = paper_beside(frame)
    assert list(table.columns) == PAPER_COLUMNS
    run = table[table["source"] == RUN]
    assert list(run["config"]) == ["0c5t", "3c2t"]
    by_setting = frame.set_index("setting")
    for _, row in run.iterrows():
        maj = by_setting.loc[row["config"], "MAJ acc"]
        assert row["MAJ %"] == f"{100 * maj:.1f}" and row["who"] == "smollm2, K=4"
    lines = {line.model: line for line in main_lines("strong") if line.dataset == "logic3"}
    printed = table[(table["source"] == PAPER) & (table["config"] == "3c2t")]
    main = printed[printed["who"].str.endswith("(K=100, M=5)")]
    assert len(main) == 5
    for _, row in main.iterrows():
        line = lines[row["who"].split(" (")[0]]
        assert (row["MAJ %"], row["RRMaj %"], row["Δ"]) == (
            f"{line.maj[2]:.1f}",
            f"{line.rrmaj[2]:.1f}",
            f"{line.delta[2]:+.1f}",
        )
    assert list(printed["who"])[-2:] == ["model not named (M=1)", "model not named (M=40)"]
    assert "This run used smollm2, not the paper's" in note
    assert "K = 100 and M = 5; this run K = 4" in note


def test_a_sweep_the_paper_has_nothing_for_says_so() -> None:
    frame = _sweep("0c3t,1c2t")
    table, note = paper_beside(frame)
    assert table.empty and "No condition of this run" in note
    empty, waiting = paper_beside(frame.iloc[0:0])
    assert empty.empty and "appear as questions finish" in waiting


@contextlib.contextmanager
def _served_tab():
    """The Experiments tab alone, on a real gradio server over scripted agents: a client."""
    pool = FakePool(FakeBackend("smollm2", obeys_injection))
    with gr.Blocks() as demo:
        build_experiments_tab(pool)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        yield app_client(f"http://127.0.0.1:{port}/", download_files=False)
    finally:
        demo.close()


@pytest.mark.slow
def test_the_served_tab_shows_the_paper_beside_the_sweep() -> None:
    with _served_tab() as client:
        outputs = client.predict(
            ["logic3"], "smollm2", "3c2t", ["strong"], 4, 16, 1, 0, ["static"], api_name="/sweep"
        )
    status, _, _, _, note, table, by_adversary = outputs
    assert "| static |" in by_adversary
    assert status.startswith("1 / 1")
    assert table["headers"] == PAPER_COLUMNS
    rows = table["data"]
    assert rows[0][:5] == ["logic3", "3c2t", "strong", RUN, "smollm2, K=4"]
    assert sum(r[3] == PAPER for r in rows) == 7  # five models' main-table lines, M = 1 and 40
    assert "the main tables (5 models" in note and "not the paper's" in note
    assert "tab:" not in note  # the paper's LaTeX labels stay in the report's files


@pytest.mark.slow
def test_the_served_sweep_runs_two_adversaries_and_refuses_an_unknown_one() -> None:
    from gradio_client.exceptions import AppError

    with _served_tab() as client:
        outputs = client.predict(
            ["logic3"],
            "smollm2",
            "2c1t",
            ["strong"],
            4,
            16,
            1,
            0,
            ["static", "last-word"],
            api_name="/sweep",
        )
        with pytest.raises(AppError) as excinfo:
            client.predict(
                ["logic3"],
                "smollm2",
                "2c1t",
                ["strong"],
                4,
                16,
                1,
                0,
                ["sneaky"],
                api_name="/sweep",
            )
    status, table, *_, by_adversary = outputs
    assert status.startswith("2 / 2")
    column = table["headers"].index("adversary")
    assert sorted(row[column] for row in table["data"]) == ["last-word", "static"]
    strategies = [line.split(" | ")[5] for line in by_adversary.splitlines() if "2c1t" in line]
    assert strategies == ["static", "last-word"]
    assert "sneaky" in str(excinfo.value) and "Traceback" not in str(excinfo.value)
