"""`rrdemo export LOG --dataset` (rrdemo.report.dataset): the committed log's trajectories, answers
and votes as parquet and a card that `datasets.load_dataset` reads back, row for row."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from rrdemo.cli import main
from rrdemo.report.dataset import FIELDS

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "assets" / "experiment_small.jsonl"


def _finished_trajectories(path: Path) -> tuple[list[dict], dict]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    done = {(r["condition"], r["question_id"]): r for r in records if r["type"] == "done"}
    trajectories = [
        r
        for r in records
        if r["type"] == "trajectory" and (r["condition"], r["question_id"]) in done
    ]
    return trajectories, done


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("export") / "small_dataset"
    assert main(["export", str(SMALL), "--dataset", "--out", str(out)]) == 0
    return out


def test_the_dataset_loads_back_with_datasets(exported: Path, tmp_path: Path) -> None:
    by_card = datasets.load_dataset(str(exported), split="train", cache_dir=str(tmp_path))
    by_files = datasets.load_dataset(
        "parquet", data_dir=str(exported), split="train", cache_dir=str(tmp_path / "p")
    )
    trajectories, done = _finished_trajectories(SMALL)
    assert by_card.num_rows == by_files.num_rows == len(trajectories) == 640
    assert by_card.column_names == [name for name, _, _ in FIELDS]
    for row, record in zip(by_card, trajectories, strict=True):
        unit = done[(record["condition"], record["question_id"])]
        vote = unit["votes"][record["method"]]
        assert (row["condition"], row["question_id"], row["method"], row["trajectory"]) == (
            record["condition"],
            record["question_id"],
            record["method"],
            record["trajectory"],
        )
        assert row["text"] == "".join(c["text"] for c in record["chunks"])
        assert [c["role"] for c in row["chunks"]] == [c["role"] for c in record["chunks"]]
        assert (row["answer"], row["correct"], row["fooled"]) == (
            record["answer"],
            record["correct"],
            record["fooled"],
        )
        assert (row["decision"], row["decision_correct"]) == (vote["answer"], vote["correct"])
        assert json.loads(row["vote_counts"]) == vote["counts"]
    assert set(by_card["config"]) == {"0c5t", "1c4t", "3c2t", "5c0t"}
    settings = zip(by_card["prompt_style"], by_card["eos_policy"], strict=True)
    assert set(settings) == {("direct", "end")}


def test_a_row_names_the_style_and_policy_its_condition_ran() -> None:
    from rrdemo.report.dataset import dataset_rows

    rows = dataset_rows(ROOT / "assets" / "evidence_pass" / "log.jsonl")  # direct style, `pass`
    assert {(r["prompt_style"], r["eos_policy"]) for r in rows} == {("direct", "pass")}


def test_the_card_names_the_split_and_every_field(exported: Path) -> None:
    card = (exported / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\nconfigs:\n- config_name: default\n")
    assert "path: data/train-00000-of-00001.parquet" in card
    assert "640 trajectories of 64 finished (condition, question) units" in card
    assert all(f"- `{name}`: " in card for name, _, _ in FIELDS)


def test_an_existing_folder_is_kept_unless_force(exported: Path, capsys) -> None:
    assert main(["export", str(SMALL), "--dataset", "--out", str(exported)]) == 2
    assert "not empty; pass --force" in capsys.readouterr().err
    assert main(["export", str(SMALL), "--dataset", "--out", str(exported), "--force"]) == 0


def test_a_submission_still_needs_a_submitter(tmp_path: Path, capsys) -> None:
    assert main(["export", str(SMALL), "--out", str(tmp_path / "s.json")]) == 2
    assert "--submitter NAME is needed" in capsys.readouterr().err
    assert not (tmp_path / "s.json").exists()
