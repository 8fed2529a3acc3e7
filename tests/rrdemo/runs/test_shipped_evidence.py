"""The committed evidence logs hold what docs/evidence.md says they hold: complete conditions,
no question of the calibration that chose the cell, no copied format placeholder."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from rrdemo.calibration.log import split_of
from rrdemo.calibration.runner import copied_placeholder
from rrdemo.runs.log import read_log
from rrdemo.tasks import get_task

ROOT = Path(__file__).resolve().parents[3]

# The terms: 3c2t on 80 questions, every other config on 40.
PLANNED = {"3c2t": 80, "0c5t": 40, "1c4t": 40, "4c1t": 40, "5c0t": 40}
EVIDENCE = {"evidence/log.jsonl": ("arith2", PLANNED), "evidence_aqua/log.jsonl": ("aqua", PLANNED)}


@pytest.fixture(params=sorted(EVIDENCE), scope="module")
def shipped(request):
    name = request.param
    return name, read_log(ROOT / "assets" / name), *EVIDENCE[name]


def test_every_condition_is_complete(shipped) -> None:
    name, log, _, planned = shipped
    labels = {key: cond["label"] for key, cond in log.conditions.items()}
    finished = Counter(labels[key] for key, _ in log.done)
    assert dict(finished) == planned, name


def test_no_question_is_one_the_calibration_used(shipped) -> None:
    name, log, task, _ = shipped
    calibrations = log.header["sweep"]["calibration"]
    assert calibrations, f"{name} names no calibration: nothing keeps selection and evidence apart"
    used = set().union(*(split_of(ROOT / path).get(task, set()) for path in calibrations))
    assert used, f"{name}: its calibration used no {task} question"
    assert not used & {qid for _, qid in log.done}, name


def test_no_trajectory_copies_a_placeholder(shipped) -> None:
    name, log, task_name, _ = shipped
    task = get_task(task_name)
    texts = [
        "".join(chunk["text"] for chunk in record["chunks"])
        for _, record in log.records
        if record["type"] == "trajectory"
    ]
    copied = sum(copied_placeholder(task, text) for text in texts)
    assert texts and copied <= 0.02 * len(texts), f"{name}: {copied} of {len(texts)}"
