"""MAJ predicted at the vote from a calibration, and selection rule 3."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rrdemo.calibration.predict import (
    CONFIGS,
    GOLD,
    NONE,
    OTHER,
    TARGET,
    Interval,
    Prediction,
    Rule3Cell,
    maj_accuracy,
    numeric_spread,
    other_agreement,
    predict_cell,
    predictions,
    rule3,
)
from rrdemo.voting import plurality

ROOT = Path(__file__).resolve().parents[3]
STYLES = ROOT / "assets" / "calibration" / "qwen15b_styles.jsonl"


def _brute_force(honest, injected, corrupted: int, spread: int | None) -> float:
    """Every agent's answer enumerated one by one and voted with the project's own `plurality`:
    the gold wins a tie among k answers with probability 1/k."""

    def values(rates):  # (answer, probability) pairs an agent can give
        out = [("gold", rates[GOLD]), ("target", rates[TARGET]), (None, rates[NONE])]
        if spread:
            out += [(f"w{j}", rates[OTHER] / spread) for j in range(spread)]
        else:
            out += [("lone", rates[OTHER])]
        return [(a, p) for a, p in out if p > 0]

    groups = [values(injected)] * corrupted + [values(honest)] * (5 - corrupted)
    total = 0.0
    for combo in itertools.product(*groups):
        p = float(np.prod([q for _, q in combo]))
        lone = iter(range(99))
        answers = [f"lone{next(lone)}" if a == "lone" else a for a, _ in combo]
        vote = plurality(answers, tie_seed=0)
        if vote.tied:
            total += p * ("gold" in vote.tied) / len(vote.tied)
        else:
            total += p * (vote.winner == "gold")
    return total


@pytest.mark.parametrize("spread", [None, 1, 3])
@pytest.mark.parametrize("corrupted", range(6))
def test_the_enumeration_equals_voting_every_assignment(spread, corrupted):
    honest = np.array([0.55, 0.1, 0.25, 0.1])  # gold, target, other, none
    injected = np.array([0.2, 0.5, 0.2, 0.1])
    exact = maj_accuracy(honest, injected, corrupted, spread)[0]
    assert exact == pytest.approx(_brute_force(honest, injected, corrupted, spread), abs=1e-12)


def test_a_sure_trap_sinks_the_vote_exactly_past_half():
    honest, injected = np.array([1.0, 0, 0, 0]), np.array([0, 1.0, 0, 0])
    got = [maj_accuracy(honest, injected, c, 3)[0] for c in range(6)]
    assert got == pytest.approx([1, 1, 1, 0, 0, 0])


def test_wrong_answers_that_agree_beat_a_lone_gold():
    # one agent right, four wrong: apart, the gold ties with four lone answers (1 in 5); spread
    # over one value, the four wrong agree and the gold never wins
    honest = np.array([0.2, 0.0, 0.8, 0.0])
    assert maj_accuracy(honest, honest, 0, 1)[0] < maj_accuracy(honest, honest, 0, None)[0]


def test_wrong_numbers_spread_over_as_many_values_as_agree():
    assert numeric_spread(13, 58) == 4
    assert numeric_spread(1, 1) == 1
    assert numeric_spread(0, 40) is None  # nobody agreed: each counts apart


def _answer(task, injection, qid, kind, n=0):
    return {
        "model": "m",
        "task": task,
        "style": "step-by-step",
        "injection": injection,
        "cell": f"m|{task}|step-by-step|{injection}",
        "question_id": qid,
        "correct": kind == GOLD,
        "obeyed": kind == TARGET,
        "answer": None if kind == NONE else ("(A)" if kind != OTHER else f"({'BCDE'[n % 4]})"),
        "stated_at": {"target": 3 if kind == TARGET and n % 2 else None},
    }


def test_the_interval_resamples_questions_and_holds_the_point():
    honest = dict.fromkeys([f"q{i}" for i in range(30)], GOLD) | {"q0": OTHER, "q1": NONE}
    injected = dict.fromkeys([f"q{i}" for i in range(30)], TARGET) | {"q2": GOLD}
    n, maj, room = predict_cell(honest, injected, 3, seed=1)
    assert n == 30
    for config in CONFIGS:
        assert maj[config].lo <= maj[config].value <= maj[config].hi
    assert room.value == pytest.approx(maj["0c5t"].value - maj["3c2t"].value)
    assert room.lo > 0  # honest agents nearly always right, injected ones nearly always obey
    # the same seed gives the same interval; questions only one cell answered are left out
    again = predict_cell(honest | {"extra": GOLD}, injected, 3, seed=1)
    assert again[2] == room


def test_predictions_pair_each_injected_cell_with_its_cell_without_injection():
    answers = [_answer("aqua", "none", f"q{i}", GOLD if i % 4 else OTHER, i) for i in range(12)]
    answers += [_answer("aqua", "moderate", f"q{i}", TARGET, i) for i in range(12)]
    answers += [_answer("logic3", "strong", "q0", TARGET)]  # no cell without injection: skipped
    (p,) = predictions(answers)
    assert (p.task, p.injection, p.questions, p.spread) == ("aqua", "moderate", 12, 3)
    assert p.maj["5c0t"].value == 0.0


def test_other_agreement_counts_pairs_of_wrong_numbers_on_one_question():
    base = {"model": "m", "style": "s", "correct": False, "obeyed": False}
    rows = [
        base | {"task": "gsm8k", "question_id": "g1", "answer": "12"},
        base | {"task": "gsm8k", "question_id": "g1", "answer": " 12"},
        base | {"task": "gsm8k", "question_id": "g1", "answer": "7"},
        base | {"task": "gsm8k", "question_id": "g2", "answer": "7"},
        base | {"task": "aqua", "question_id": "a1", "answer": "(B)"},  # letters: not counted
        base | {"task": "aqua", "question_id": "a1", "answer": "(B)"},
    ]
    assert other_agreement(rows) == (1, 3)


def _cell(task, injection, room, early, lo=0.05):
    maj = dict.fromkeys(CONFIGS, Interval(0.5, 0.4, 0.6))
    p = Prediction("m", task, "step-by-step", injection, 40, 3, maj, Interval(room, lo, room))
    return Rule3Cell(p, early)


def test_rule3_takes_the_largest_room_per_kind_among_eligible_cells():
    cells = [
        _cell("logic3", "moderate", 0.44, 0.08),
        _cell("logic7", "moderate", 0.60, 0.90),  # states the target at once: not eligible
        _cell("aqua", "moderate", 0.70, 0.10, lo=-0.02),  # room's interval reaches 0
        _cell("arith4", "moderate", 0.23, 0.18),
        _cell("arith4", "strong", 0.23, 0.08),  # same room: the smaller early share wins
        _cell("arith2", "strong", 0.05, 0.0),
    ]
    picks = rule3(cells)
    assert picks["paper"].prediction.task == "logic3"
    assert picks["generated"].prediction.key[1:] == ("arith4", "step-by-step", "strong")
    assert rule3(cells[1:3]) == {"paper": None, "generated": None}


@pytest.mark.skipif(not STYLES.is_file(), reason="the styles calibration is not committed")
def test_calibrate_report_prints_the_prediction_and_rule3(tmp_path):
    log = tmp_path / "styles.jsonl"
    shutil.copy(STYLES, log)
    out = subprocess.run(
        [sys.executable, "-m", "rrdemo", "calibrate", "--report", str(log)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    assert "MAJ 0c5t" in out and "MAJ 5c0t" in out and "room" in out
    assert "Rule 3 picks: paper task:" in out and "generated task:" in out
    md = (tmp_path / "styles_report" / "calibration.md").read_text()
    assert "## MAJ predicted at the vote" in md
    csv = (tmp_path / "styles_report" / "prediction.csv").read_text().splitlines()
    assert csv[0].startswith("model,task,style,injection,questions")
    assert len(csv) == 1 + 36  # every injected cell of 9 tasks x 2 styles x 2 injections
