"""A calibration's settings are checked whole before anything loads; its split is seeded."""

from __future__ import annotations

import pytest

from rrdemo.calibration.plan import DEFAULTS, normalize_calibration, plan_calibration
from rrdemo.errors import RRError
from rrdemo.tasks import TASK_NAMES


def test_all_tasks_by_default_and_every_cell_of_the_product() -> None:
    plan = plan_calibration({"models": "smollm2", "n": 3, "styles": "direct,step-by-step"})
    assert plan.settings["tasks"] == list(TASK_NAMES)
    assert len(plan.cells) == len(TASK_NAMES) * 2 * len(DEFAULTS["injections"])
    assert len({c.key for c in plan.cells}) == len(plan.cells)
    assert plan.n_answers == 3 * len(plan.cells)
    assert all(len(qs) == 3 for qs in plan.split.values())


def test_the_split_is_the_same_for_the_same_seed_and_moves_with_it() -> None:
    def qids(seed: int) -> list[str]:
        plan = plan_calibration(
            {"models": "smollm2", "tasks": "logic3", "n": 5, "split_seed": seed}
        )
        return [q.qid for q in plan.split["logic3"]]

    assert qids(4) == qids(4)
    assert qids(4) != qids(5)


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({"colour": "red"}, "unknown calibration setting(s): colour; allowed: models"),
        ({"injections": "none,loud"}, "unknown injection 'loud'; allowed: none, moderate"),
        ({"injections": "custom"}, "needs --custom-template with a {target} slot"),
        ({"styles": "chatty"}, "unknown prompt style 'chatty'"),
        ({"tasks": "custom"}, "calibrate the paper's tasks"),
        ({"tasks": "logic3", "n": 5000}, "asked for 5000 questions but this set has only"),
        ({"n": "many"}, "n (questions per task) must be a whole number"),
        ({"max_tokens": 0}, "L (max_tokens) must be at least 1"),
        ({"temperature": 9}, "temperature must be between 0 and 5"),
        ({"models": "no-such-model"}, "no-such-model"),
        ({"injections": []}, "give at least one of injections"),
        ({"n": 10**9}, "n (questions per task) is 1000000000; at most 10000 is allowed"),
        ({"max_tokens": 10**9}, "L (max_tokens) is 1000000000; at most 32768 is allowed"),
        ({"tasks": ",".join(["logic3"] * 33)}, "the number of tasks is 33; at most 32"),
        ({"temperature": "warm"}, "temperature must be a number, got 'warm'"),
    ],
)
def test_bad_settings_are_refused_with_what_is_allowed(raw: dict, words: str) -> None:
    with pytest.raises(RRError, match=None) as caught:
        plan_calibration({"models": "smollm2", **raw})
    assert words in str(caught.value)


def test_a_custom_injection_keeps_its_template_and_others_drop_it() -> None:
    kept = normalize_calibration({"injections": "custom", "custom_template": "Pick {target}."})
    assert kept["custom_template"] == "Pick {target}."
    dropped = normalize_calibration({"injections": "strong", "custom_template": "Pick {target}."})
    assert dropped["custom_template"] is None
