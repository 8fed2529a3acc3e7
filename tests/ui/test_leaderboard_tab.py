"""The Leaderboard tab: its callbacks on a real leaderboard (submit, moderate, filter, download),
and the tab on a real Gradio server driven with gradio_client: list and filter, CSV download,
submit a good file and bad ones, admin moderation, and escaping of hostile text."""

from __future__ import annotations

import csv
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

gr = pytest.importorskip("gradio")
gradio_client = pytest.importorskip("gradio_client")

from leaderboard.db import run_transaction  # noqa: E402
from leaderboard.hub_sync import SIGN_IN, Store, open_store  # noqa: E402
from leaderboard.paper_seed import MODEL_IDS  # noqa: E402
from leaderboard.ranking import filter_rows, pooled_line  # noqa: E402
from leaderboard.service import MAX_SUBMISSION_ID, board_rows, store_submission  # noqa: E402
from rrdemo.errors import RRError  # noqa: E402
from rrdemo.report.submission import MAX_FILE_BYTES, parse_submission  # noqa: E402
from tests.support.samples import encode, result_row, submission  # noqa: E402
from tests.support.served import app_client  # noqa: E402
from ui.leaderboard_tab import (  # noqa: E402
    _submission_number,
    download,
    moderate,
    pending,
    provenance_cell,
    refresh,
    submit_file,
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_building_the_tab_reads_nothing() -> None:
    """The board and the queue are read when a page loads, never while the tab is built."""
    from ui.leaderboard_tab import build_leaderboard_tab

    class Untouchable:
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"the tab used store.{name} while it was built")

    with gr.Blocks() as demo, gr.Tab("Leaderboard"):
        build_leaderboard_tab(Untouchable())
    assert {"leaderboard_refresh", "leaderboard_pending"} <= {d.api_name for d in demo.fns.values()}


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """The leaderboard as app.py opens it (the test's own database), with an admin token."""
    monkeypatch.setenv("LEADERBOARD_ADMIN_TOKEN", "sesame")
    opened = open_store()
    yield opened
    opened.factory.kw["bind"].dispose()


def _file(tmp_path: Path, content: bytes, name: str = "sub.json") -> str:
    path = tmp_path / name
    path.write_bytes(content)
    return str(path)


# -- the callbacks ----------------------------------------------------------------------------------
def test_a_submission_number_is_a_whole_number_in_range() -> None:
    assert _submission_number(3) == _submission_number(3.0) == _submission_number("3") == 3
    assert _submission_number(MAX_SUBMISSION_ID) == MAX_SUBMISSION_ID
    for bad in (None, "", "three", 2.5, 0, -1, 2 * MAX_SUBMISSION_ID, float("inf"), float("nan")):
        with pytest.raises(RRError, match="a whole number, 1 or more, as the pending list"):
            _submission_number(bad)


def test_a_number_just_past_the_largest_id_is_refused() -> None:
    with pytest.raises(RRError, match="whole number"):
        _submission_number(MAX_SUBMISSION_ID + 1)
    with pytest.raises(RRError, match="whole number"):
        _submission_number(str(MAX_SUBMISSION_ID + 1))
    assert _submission_number(str(MAX_SUBMISSION_ID)) == MAX_SUBMISSION_ID
    assert _submission_number(" 7 ") == _submission_number(7.0) == 7


def test_submit_file_says_what_is_missing_or_wrong(store: Store, tmp_path: Path) -> None:
    good = _file(tmp_path, encode(submission()))
    assert submit_file(store, None, None, False).startswith("Choose a submission file")
    assert submit_file(store, good, None, True) == SIGN_IN  # a Space needs a login
    huge = _file(tmp_path, b" " * (MAX_FILE_BYTES + 1), "huge.json")
    assert f"larger than the limit of {MAX_FILE_BYTES} bytes" in submit_file(
        store, huge, None, False
    )
    bad = _file(tmp_path, encode(submission([result_row(dataset="mmlu")])), "bad.json")
    rejected = submit_file(store, bad, None, False).splitlines()
    assert rejected[0] == "Rejected:" and any("unknown dataset" in line for line in rejected[1:])
    assert submit_file(store, good, None, False).startswith("Accepted as submission #")


def test_the_queue_and_moderation_are_for_admins(store: Store, tmp_path: Path) -> None:
    submit_file(store, _file(tmp_path, encode(submission())), None, False)
    message, queue = pending(store, "wrong")
    assert "token is wrong" in message and queue.empty
    message, queue = pending(store, "sesame")
    assert message == f"{len(queue)} submissions wait for approval." and len(queue) == 1
    number = int(queue.iloc[0]["submission"])
    message, queue = moderate(store, "approve", "sesame", "x", "")
    assert "whole number" in message and queue.empty
    message, queue = moderate(store, "approve", "sesame", number, "fine")
    assert message == f"Submission #{number} is now approved." and queue.empty


def test_refresh_and_download_show_the_filtered_rows(store: Store, tmp_path: Path) -> None:
    with store.factory() as session:
        every = board_rows(session)
    chosen = filter_rows(every, dataset="gsm8k", strength="strong")
    assert 0 < len(chosen) < len(every)
    ranking, board, _chart, _generated, _pooled = refresh(store, "gsm8k", "strong", "all", "all")
    assert len(board) == len(chosen) and set(board["dataset"]) == {"gsm8k"}
    assert len(ranking) == len({row.model for row in chosen})
    out = tmp_path / "out"
    path = download(store, "gsm8k", "strong", "all", "all", out)
    with open(path, encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))
    assert len(records) == len(chosen) and {r["dataset"] for r in records} == {"gsm8k"}
    # The same rows again are the same file (named by its content), not a new folder each time.
    assert download(store, "gsm8k", "strong", "all", "all", out) == path
    assert len(list(out.iterdir())) == 1
    other = download(store, "gsm8k", "moderate", "all", "all", out)
    assert other != path and len(list(out.iterdir())) == 2


def test_the_board_names_each_rows_prompt_style_and_eos_policy(store: Store) -> None:
    doc = parse_submission(encode(submission([result_row(prompt_style="step-by-step")])))
    run_transaction(store.factory, lambda s: store_submission(s, doc, status="approved"))
    ranking, board, _chart, _generated, _pooled = refresh(store, "gsm8k", "moderate", "all", "all")
    shown = set(zip(board["source"], board["prompt style"], board["EOS policy"], strict=True))
    assert shown == {("paper", "-", "-"), ("local_run", "step-by-step", "-")}
    scored = dict(zip(ranking["model"], ranking["prompt styles"], strict=True))
    assert scored[result_row()["model"]] == "step-by-step" and set(scored.values()) >= {"-"}


def test_rows_of_the_runs_decisions_get_a_pooled_line_and_no_averaged_delta(store: Store) -> None:
    """Two runs' 3c2t rows with their paired counts (on two tasks), and a third on the first one's
    task and injection: the tab pools the two, shows the third not pooled, and its ranking line
    gives RRMaj - MAJ no number of its own."""
    model, rows = "org/paired", []
    for dataset, b, c in (("gsm8k", 3, 13), ("aqua", 6, 2), ("gsm8k", 1, 1)):
        maj = 0.25 + b / 40
        rows.append(
            result_row(
                model=model, agent_models=[model] * 5, dataset=dataset, maj_accuracy=maj,
                rrmaj_accuracy=maj + (c - b) / 40, maj_ci=None, maj_only=b, rrmaj_only=c,
            )
        )  # fmt: skip
    numbers = [_approved(store, submission([r], submitter=f"s{i}")) for i, r in enumerate(rows)]
    ranking, board, _chart, _generated, pooled = refresh(store, "all", "all", "all", "all")
    (line,) = pooled[pooled["model"] == model].to_dict("records")
    kept = [
        r for r in filter_rows(board_rows_of(store), model=model) if r.submission_id != numbers[2]
    ]
    e = pooled_line(kept)
    assert (
        line["RRMaj - MAJ [95%]"] == f"{100 * e.delta:+.1f} [{100 * e.lo:+.1f}, {100 * e.hi:+.1f}]"
    )
    assert (line["questions"], line["MAJ right only"], line["RRMaj right only"]) == (80, 9, 15)
    assert (
        f"submission #{numbers[2]}: may stand on the questions of submission #{numbers[0]}"
        in (line["not pooled"])
    )
    (score,) = ranking[ranking["model"] == model].to_dict("records")
    assert score["mean gain %"] == "-" and score["RRMaj 95% CI"] != "-"
    assert "pooled per config" in score["intervals"]


def board_rows_of(store: Store) -> list:
    with store.factory() as session:
        return board_rows(session)


def test_the_cli_ranks_and_writes_what_the_tab_shows(store: Store, tmp_path: Path, capsys) -> None:
    import pandas as pd

    from leaderboard.cli import main

    ranking, *_ = refresh(store, "gsm8k", "strong", "majority (rho >= 0.6)", "all")
    filters = ["--task", "gsm8k", "--strength", "strong", "--band", "majority"]
    assert main(["rank", *filters, "--csv", str(tmp_path / "rank.csv")]) == 0
    written = pd.read_csv(tmp_path / "rank.csv", keep_default_na=False)
    assert written["model"].tolist() == ranking["model"].tolist()
    column = "RRMaj % (rho>=0.6)"
    assert written[column].tolist() == ranking[column].tolist()
    assert written["mean gain %"].tolist() == ranking["mean gain %"].tolist()
    assert main(["list", *filters, "--csv", str(tmp_path / "rows.csv")]) == 0
    tab_csv = download(store, "gsm8k", "strong", "majority (rho >= 0.6)", "all", tmp_path / "out")
    assert (tmp_path / "rows.csv").read_text() == Path(tab_csv).read_text()
    capsys.readouterr()


def _approved(store: Store, doc: dict) -> int:
    parsed = parse_submission(encode(doc), allow_reserved=True)
    outcome = run_transaction(
        store.factory, lambda s: store_submission(s, parsed, status="approved")
    )
    return outcome.submission_id


def _majority_rows(model: str, rrmaj: float, **overrides) -> list[dict]:
    """A model's 3c2t and 4c1t rows on gsm8k, RRMaj `rrmaj` at both."""
    return [
        result_row(
            model=model, agent_models=[model] * 5, n_corrupted=c, n_honest=5 - c,
            corrupted_agents=list(range(c)), rrmaj_accuracy=rrmaj, **overrides,
        )
        for c in (3, 4)
    ]  # fmt: skip


def test_equal_scores_share_a_rank_and_superseded_rows_are_hidden_and_never_ranked(
    store: Store,
) -> None:
    for name in ("org/tied-a", "org/tied-b"):
        _approved(store, submission(_majority_rows(name, 0.95), submitter=name))
    old = _approved(
        store,
        submission(
            _majority_rows("org/old", 1.0, superseded="old prompt"), submitter="old", notes="o"
        ),
    )
    few = _approved(
        store,
        submission(
            _majority_rows("org/few", 1.0, n_questions=20, maj_ci=None),
            submitter="few",
            notes="f",
        ),
    )
    ranking, board, _chart, _generated, _pooled = refresh(store, "gsm8k", "moderate", "all", "all")
    ranks = dict(zip(ranking["model"], ranking["rank"], strict=True))
    assert ranks["org/tied-a"] == ranks["org/tied-b"] == "=1"
    assert "org/old" not in ranks and "org/few" not in ranks  # never ranked
    assert "2" not in ranks.values() and "3" in ranks.values()  # the next rank after two at 1
    shown = dict(zip(board["submission"], board["standing"], strict=True))
    assert old not in shown  # hidden by default
    assert shown[few] == "not ranked: 20 questions (< 40)"
    ranking, board, *_ = refresh(store, "gsm8k", "moderate", "all", "all", True)
    assert "org/old" not in set(ranking["model"])
    shown = dict(zip(board["submission"], board["standing"], strict=True))
    assert shown[old] == "superseded: old prompt"
    assert {"questions", "estimator", "source", "study or log"} <= set(board.columns)


def test_a_rows_study_is_a_link_on_a_space_and_submitted_text_stays_text(store: Store) -> None:
    ours = _approved(store, submission(source="rrdemo", provenance="assets/evidence/study.yaml"))
    theirs = _approved(
        store, submission(provenance="[click](https://evil.example) <b>x</b>", notes="t")
    )
    rows = {r.submission_id: r for r in run_transaction(store.factory, board_rows)}
    link = provenance_cell(rows[ours], "someone/rrdemo")
    assert link == (
        "[assets/evidence/study.yaml](https://huggingface.co/spaces/someone/rrdemo/blob/main/"
        "assets/evidence/study.yaml)"
    )
    assert provenance_cell(rows[ours], None) == "`assets/evidence/study.yaml`"  # no Space
    assert provenance_cell(rows[theirs], "someone/rrdemo") == (
        "`[click](https://evil.example) <b>x</b>`"  # a code span: no link, no markup
    )


# -- the tab on a real server -----------------------------------------------------------------------
@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    from ui.leaderboard_tab import build_leaderboard_tab

    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    monkeypatch.setenv("LEADERBOARD_ADMIN_TOKEN", "sesame")
    store = open_store()
    with gr.Blocks() as demo, gr.Tab("Leaderboard"):
        build_leaderboard_tab(store)
    port = _free_port()
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, quiet=True)
    try:
        yield app_client(f"http://127.0.0.1:{port}/")
    finally:
        demo.close()
        store.factory.kw["bind"].dispose()


def _refresh(client, dataset="all", strength="all", band="all", source="all"):
    ranking, board, chart = client.predict(
        dataset, strength, band, source, api_name="/leaderboard_refresh"
    )
    return ranking, board, chart


@pytest.mark.slow
def test_tab_lists_filters_submits_and_moderates(client, tmp_path: Path) -> None:
    ranking, board, chart = _refresh(client, "gsm8k", "strong")
    assert len(board["data"]) == 5 * 6  # 5 models x (ceiling, 4 configs, floor)
    top = dict(zip(ranking["headers"], ranking["data"][0], strict=True))
    assert top["model"] == MODEL_IDS["Llama-4-Scout-17B"] and top["mean gain %"] == 49.1
    assert chart["type"] == "plotly" and chart["plot"].count('"legendgroup"') == 10

    _, majority, _ = _refresh(client, band="majority (rho >= 0.6)", source="paper")
    configs = {dict(zip(majority["headers"], r, strict=True))["config"] for r in majority["data"]}
    assert configs == {"3c2t", "4c1t"} and len(majority["data"]) == 2 * 5 * 6 * 2

    csv_path = client.predict("aqua", "moderate", "all", "all", api_name="/leaderboard_csv")
    with open(csv_path, encoding="utf-8") as handle:
        records = list(csv.DictReader(handle))
    assert len(records) == 5 * 6 and {r["dataset"] for r in records} == {"aqua"}

    hostile = "<script>alert('x')</script>"
    good = tmp_path / "good.json"
    good.write_bytes(encode(submission([result_row(dataset="aqua")], submitter=hostile)))
    message = client.predict(gradio_client.handle_file(str(good)), api_name="/leaderboard_submit")
    assert message.startswith("Accepted as submission #3") and "pending" in message
    again = client.predict(gradio_client.handle_file(str(good)), api_name="/leaderboard_submit")
    assert again.startswith("Already present as submission #3")

    bad = tmp_path / "bad.json"
    bad.write_bytes(encode(submission([result_row(maj_accuracy=1.7, dataset="mmlu")])))
    rejected = client.predict(gradio_client.handle_file(str(bad)), api_name="/leaderboard_submit")
    assert rejected.splitlines()[0] == "Rejected:"
    assert "results[0].dataset: unknown dataset" in rejected
    assert "results[0].maj_accuracy: must be a fraction between 0 and 1" in rejected
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (1024 * 1024 + 1))
    too_big = client.predict(gradio_client.handle_file(str(huge)), api_name="/leaderboard_submit")
    assert "larger than the limit" in too_big
    # The server still answers and nothing from the bad files was stored.
    _, local, _ = _refresh(client, source="local_run")
    assert local["data"] == []  # the good file is pending, so not public yet

    refused, queue = client.predict("wrong", None, "", api_name="/leaderboard_pending")
    assert "token is wrong" in refused and queue["data"] == []  # pending is for admins only
    _, queue = client.predict("sesame", None, "", api_name="/leaderboard_pending")
    pending = [dict(zip(queue["headers"], r, strict=True)) for r in queue["data"]]
    assert [p["submission"] for p in pending] == [3]
    assert pending[0]["submitter"] == "<script>alert('x')</script>"  # text: the page shows it as is

    refused, _ = client.predict("wrong", 3, "", api_name="/leaderboard_approve")
    assert "token is wrong" in refused
    approved, queue = client.predict("sesame", 3, "looks fine", api_name="/leaderboard_approve")
    assert approved == "Submission #3 is now approved." and queue["data"] == []
    _, local, _ = _refresh(client, source="local_run")
    row = dict(zip(local["headers"], local["data"][0], strict=True))
    assert (row["dataset"], row["config"], row["RRMaj %"]) == ("aqua", "3c2t", 50.0)
    assert row["submitter"] == "<script>alert('x')</script>"  # shown as text
