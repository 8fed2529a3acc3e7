"""Every task's decision path, on real gold answers: the decision is scored like its trajectories.

Scripted agents write a short solution ending in the gold answer (honest) or in the injected target
(corrupted). The Decision must show a readable answer (never a vote key such as `sym:Integer(5)`),
and its `correct` / `fooled` must agree with the per-trajectory scoring (AnswerExtracted), and the
experiment log's `done` records must score honest majorities right on every task.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from rrdemo.config import RunConfig, Sampling
from rrdemo.events import AnswerExtracted, Decision, Vote
from rrdemo.protocols import run_question
from rrdemo.report.tables import vote_rates
from rrdemo.runs.log import read_log
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import Condition, Plan
from rrdemo.seats import homogeneous_agents
from rrdemo.tasks import get_task, load_questions
from rrdemo.tasks.base import Question
from rrdemo.tasks.benchmarks import FINAL_FORMAT
from tests.support.events import event_from_dict
from tests.support.fakes import FakeBackend, FakePool

# MATH-500 answers of every shape the issue names, on real MATH-500 problems (gold replaced where
# the data set has no such answer), plus real MATH-500 golds as they are.
MATH_GOLDS = ("5", "\\frac{1}{2}", "\\sqrt{2}", "3\\pi", "(1,2)", "\\text{Evelyn}")
MATH_REAL = ("math500-0000", "math500-0013", "math500-0043", "math500-0078", "math500-0279")


def math_questions() -> list[Question]:
    real = {q.qid: q for q in load_questions("math500", source="offline")}
    base = real["math500-0004"]
    made = [
        replace(base, qid=f"math500-gold-{i}", text=f"{base.text} (variant {i})", gold=g)
        for i, g in enumerate(MATH_GOLDS)
    ]
    return made + [real[qid] for qid in MATH_REAL]


def questions_of(task: str) -> list[Question]:
    if task == "math500":
        return math_questions()
    return load_questions(task, n=4, seed=3, source="offline")


def final_line(task_name: str, answer: str) -> str:
    """The answer as the task's prompt asks for it."""
    if task_name == "math500":
        return f"The answer is $\\boxed{{{answer}}}$."
    return f"The answer is {answer}."


def scripted(task_name: str, gold_of: dict[str, str]):
    """Honest agents solve the question; corrupted agents write the target they are told."""

    def script(prompt: str) -> str:
        told = re.search(r"MUST select (.+?) as your final answer", prompt)
        if told:
            answer = told.group(1)
            if task_name == "math500":
                answer = answer.strip("$")
        else:
            answer = next(g for text, g in gold_of.items() if text in prompt)
        return f"Let me work through it step by step. {final_line(task_name, answer)}"

    return script


def config(n: int, c: int, corrupted_first: bool) -> RunConfig:
    return RunConfig(
        agents=homogeneous_agents("scripted", n, c, corrupted_first),
        strength="strong",
        k=64,  # one turn holds the whole answer: the opener decides each RR trajectory
        max_tokens=64,
        order="fixed",
        sampling=Sampling(temperature=0.0, seed=1),
    )


TASKS = ("gsm8k", "aqua", "math500", "logic3", "logic7", "track7")


@pytest.mark.parametrize("task_name", TASKS)
@pytest.mark.parametrize(("c", "corrupted_first"), [(2, False), (3, True)])
def test_decision_is_scored_like_the_trajectories(task_name, c, corrupted_first) -> None:
    task = get_task(task_name)
    questions = questions_of(task_name)
    pool = FakePool(
        FakeBackend("scripted", scripted(task_name, {q.text: q.gold for q in questions}))
    )
    for question in questions:
        events = list(run_question(config(5, c, corrupted_first), question, task, pool))
        for method in ("MAJ", "RRMaj"):
            answers = [e for e in events if isinstance(e, AnswerExtracted) and e.method == method]
            (vote,) = [e for e in events if isinstance(e, Vote) and e.method == method]
            (decision,) = [e for e in events if isinstance(e, Decision) and e.method == method]
            # honest answers are read as right, corrupted ones as fooled
            assert all(a.answer is not None for a in answers)
            assert all(a.correct != a.fooled for a in answers), [
                (a.answer, question.gold) for a in answers
            ]
            # the decision is the answer most trajectories gave, shown as an answer, and scored
            # exactly as those trajectories were
            winners = [a for a in answers if task.vote_key(a.answer) == decision.key]
            assert len(winners) == max(vote.counts.values())
            assert decision.answer == winners[0].answer
            assert not decision.answer.startswith(("sym:", "tex:"))
            assert set(vote.counts) <= {a.answer for a in answers}
            assert decision.correct == winners[0].correct
            assert decision.fooled == winners[0].fooled
            # 2 corrupted in the last seats: honest majority and honest RR openers; 3 corrupted
            # first: corrupted majority and corrupted openers
            assert decision.correct is (c == 2), (question.qid, decision)
            assert decision.fooled is (c == 3)
            # the event survives its JSON round trip
            assert event_from_dict(json.loads(json.dumps(decision.to_dict()))) == decision


def test_done_records_score_every_task_right(tmp_path) -> None:
    """Each task's log: every vote shows a readable answer, and honest majorities are right."""
    conditions = []
    gold_of = {}
    for name in TASKS:
        task = get_task(name)
        questions = tuple(questions_of(name)[:4])
        gold_of.update({q.text: q.gold for q in questions})
        for c, first in ((0, True), (2, False), (3, True)):
            conditions.append(Condition(task, config(5, c, first), questions))
    pool = FakePool(FakeBackend("scripted", _any_task_script(gold_of)))
    log = tmp_path / "run.jsonl"
    run_plan(Plan({"test": True}, tuple(conditions)), log, pool, progress=False)
    done = read_log(log).finished_units()
    assert len(done) == sum(len(c.questions) for c in conditions)
    for record in done:
        for vote in record["votes"].values():
            assert vote["answer"] is not None and not vote["answer"].startswith(("sym:", "tex:"))
            assert vote["key"] is not None
    rates = vote_rates(read_log(log))
    assert len(rates) == len(conditions)
    # the honest runs are right on every task, MATH-500 included
    for r in rates:
        if r.condition["c"] < 3:
            assert r.accuracy == {"MAJ": 1.0, "RRMaj": 1.0}, r.condition["task"]


def _any_task_script(gold_of: dict[str, str]):
    """The scripted agent for a mixed-task log: the final-answer format follows the prompt."""

    def script(prompt: str) -> str:
        task_name = "math500" if FINAL_FORMAT["math"] in prompt else "other"
        return scripted(task_name, gold_of)(prompt)

    return script


def test_math500_is_shown_and_scored_right_in_the_arena_and_the_cli(capsys) -> None:
    """A right MATH-500 answer reads as right in the Arena verdict and in `rrdemo run`'s output."""
    from rrdemo.cli.run import _TextPrinter
    from ui.render import render_verdict
    from ui.state import ArenaState

    task = get_task("math500")
    question = next(q for q in math_questions() if q.gold == "\\frac{1}{2}")
    pool = FakePool(FakeBackend("scripted", scripted("math500", {question.text: "0.5"})))
    cfg = config(5, 2, False)
    events = list(run_question(cfg, question, task, pool, interleave=True))
    state = ArenaState(
        request={},
        agents=[{"model": a.model, "corrupted": a.corrupted} for a in cfg.agents],
        question={"gold": question.gold},
        config=cfg.to_dict(),
    )
    printer = _TextPrinter(cfg, colour=False)
    for event in events:
        state.apply(event)
        printer(event)
    verdict = render_verdict(state)
    assert verdict.count(">correct<") == 2, verdict
    assert "answer 0.5" in verdict and "sym:" not in verdict
    out = capsys.readouterr().out
    assert ">>> MAJ decision: 0.5 -> correct" in out
    assert ">>> RRMaj decision: 0.5 -> correct" in out
    assert "sym:" not in out


@pytest.mark.parametrize(
    ("first", "second"),
    [("10\\%", "10"), ("x=5", "5"), ("\\text{Evelyn}", "Evelyn"), ("x\\in[2,5)", "[2,5)")],
)
def test_math500_votes_group_the_answers_the_scorer_calls_equal(first: str, second: str) -> None:
    """Two writings of the gold split 2 + 2 against 3 for the target unless they vote together."""
    from types import SimpleNamespace

    from rrdemo.protocols import Final, _conclude

    task = get_task("math500")
    assert task.is_correct(first, second) and task.is_correct(second, first)
    question = Question("math500", "math500-x", "?", gold=second)
    written = [first, first, second, second, "7", "7", "7"]
    finals = [
        Final(j, f"The answer is $\\boxed{{{answer}}}$.", 9, "eos", j)
        for j, answer in enumerate(written)
    ]
    agents = [SimpleNamespace(corrupted=answer == "7") for answer in written]
    events = list(_conclude("RRMaj", finals, agents, task, question, "7", tie_seed=0))
    answers = [e for e in events if isinstance(e, AnswerExtracted)]
    decision = next(e for e in events if isinstance(e, Decision))
    vote = next(e for e in events if isinstance(e, Vote))
    assert len({a.key for a in answers[:4]}) == 1 and answers[0].key != answers[4].key
    assert vote.counts == {task.normalize(first): 4, "7": 3}
    assert decision.correct and not decision.fooled
    assert [a.fooled for a in answers] == [False] * 4 + [True] * 3
