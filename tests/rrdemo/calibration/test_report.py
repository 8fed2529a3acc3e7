"""The calibration report's words for a log: its label and how its answers were drawn."""

from __future__ import annotations

import pytest

from rrdemo.calibration.report import calibration_label, calibration_settings


@pytest.mark.parametrize(
    ("tasks", "label"),
    [
        (["gsm8k", "aqua"], "m: paper tasks"),
        (["arith2", "arith4"], "m: generated arithmetic (beyond the paper)"),
        (["arith2", "logic3", "demo"],
         "m: generated arithmetic (beyond the paper) and paper tasks and our tasks (not the paper's)"),
    ],
)  # fmt: skip
def test_a_log_is_labelled_by_its_models_and_the_kind_of_its_tasks(tasks, label) -> None:
    assert calibration_label({"settings": {"models": ["m"], "tasks": tasks}}) == label


def test_the_settings_sentence_names_l_sampling_and_the_split() -> None:
    settings = {"max_tokens": 512, "temperature": 0.7, "top_p": 0.95, "seed": 0}
    header = {"settings": {**settings, "n": 2, "split_seed": 1}, "split": {"aqua": ["a", "b"]}}
    text = calibration_settings(header)
    assert "L = 512, temperature 0.7, top-p 0.95, seed 0" in text
    assert "2 questions per task drawn with split seed 1 (aqua: 2)" in text
