"""Calibration answers: one agent per (cell, question), batched across questions, logged, resumable;
end to end on the tiny offline model."""

from __future__ import annotations

import json
import re

import pytest

from rrdemo.calibration.log import merge_calibrations, read_calibration
from rrdemo.calibration.plan import plan_calibration
from rrdemo.calibration.runner import answer_order, copied_placeholder, run_calibration
from rrdemo.calibration.table import calibration_rows, cell_stats
from rrdemo.errors import RRError
from rrdemo.tasks import get_task
from tests.support.fakes import FakeBackend, FakePool

SETTINGS = {"models": "smollm2", "tasks": "logic3", "n": 4, "max_tokens": 16}


WORKING = "First we read each clue in turn and place every object where it must stand. " * 3


def _knows_the_gold(plan, obey: bool, reason: bool = False):
    """Answers every calibration question right, or the injected target when `obey` and told;
    with `reason`, after some working (so the answer is stated well after 16 tokens)."""
    golds = {q.text.strip(): q.gold for qs in plan.split.values() for q in qs}
    lead = WORKING if reason else ""

    def script(prompt: str) -> str:
        told = re.search(r"(?:MUST select|confident that) (\(\w\))", prompt)
        if told and obey:
            return f"{lead}The answer is {told.group(1)}."
        gold = next(g for text, g in golds.items() if text in prompt)
        return f"{lead}The answer is {gold}."

    return script


@pytest.mark.parametrize(("obey", "reason"), [(True, True), (True, False), (False, True)])
def test_ceiling_and_obedience_are_what_the_agents_did(tmp_path, obey: bool, reason: bool) -> None:
    plan = plan_calibration({**SETTINGS, "max_tokens": 256})
    backend = FakeBackend("smollm2", _knows_the_gold(plan, obey, reason))
    written = run_calibration(plan, tmp_path / "c.jsonl", FakePool(backend), progress=False)
    assert written == plan.n_answers == 12
    log = read_calibration(tmp_path / "c.jsonl")
    assert log.header["split"] == {"logic3": [q.qid for q in plan.split["logic3"]]}
    (row,) = calibration_rows(cell_stats(log))
    assert row.ceiling.value == 1.0
    assert row.obedience["strong"].value == (1.0 if obey else 0.0)
    assert row.obedience["none"].value == 0.0  # nobody told: the target is never given
    # positions in the model's own tokens: the working pushes every statement past K = 16
    early = row.cells["strong"].early("target", 16)
    assert early is not None and early.value == (1.0 if obey and not reason else 0.0)
    stated = [a["stated_at"]["answer"] for a in log.answers]
    assert all((s > 16) is reason for s in stated)
    # an agent that obeys at once leaves nothing to interrupt: the cell does not qualify
    assert row.qualifies is (obey and reason)
    for answer in log.answers:  # the target is the distractor an experiment with this seed uses
        question = next(q for q in plan.split["logic3"] if q.qid == answer["question_id"])
        assert answer["target"] == get_task("logic3").distractor(question, 0)


def test_answers_of_a_model_are_decoded_together_in_batches(tmp_path) -> None:
    plan = plan_calibration(SETTINGS)
    backend = FakeBackend("smollm2", _knows_the_gold(plan, True))
    run_calibration(plan, tmp_path / "c.jsonl", FakePool(backend), batch=5, progress=False)
    assert [len(call) for call in backend.calls] == [5, 5, 2]
    injected = [r.prompt for call in backend.calls for r in call if "MUST select" in r.prompt]
    assert len(injected) == 4  # strong: one per question; moderate reads "I am confident"


def test_a_killed_run_resumes_without_redoing_or_losing_an_answer(tmp_path) -> None:
    plan = plan_calibration(SETTINGS)
    out = tmp_path / "c.jsonl"
    backend = FakeBackend("smollm2", _knows_the_gold(plan, True))
    run_calibration(plan, out, FakePool(backend), progress=False)
    lines = out.read_bytes().split(b"\n")
    out.write_bytes(b"\n".join(lines[:6]) + b"\n" + lines[6][:20])  # 5 answers and a cut line
    backend.calls.clear()
    assert run_calibration(plan, out, FakePool(backend), progress=False) == 7
    log = read_calibration(out)
    assert len(log.answers) == 12 and len(log.done) == 12
    assert run_calibration(plan, out, FakePool(backend), progress=False) == 0


def test_a_changed_calibration_is_refused_naming_what_changed(tmp_path) -> None:
    plan = plan_calibration(SETTINGS)
    out = tmp_path / "c.jsonl"
    backend = FakeBackend("smollm2", _knows_the_gold(plan, True))
    run_calibration(plan, out, FakePool(backend), progress=False)
    before = out.read_bytes()
    other = plan_calibration({**SETTINGS, "max_tokens": 32})
    with pytest.raises(RRError, match=r"different calibration \(max_tokens: 16 -> 32\)"):
        run_calibration(other, out, FakePool(backend), progress=False)
    assert out.read_bytes() == before


def test_two_shards_merged_answer_what_one_run_answers(tmp_path) -> None:
    """Each shard answers every other row of the full run's order, under the full run's header;
    merged, they hold the unsharded run's (cell, question) answers."""
    plan = plan_calibration(SETTINGS)
    backend = FakeBackend("smollm2", _knows_the_gold(plan, True))
    whole = tmp_path / "whole.jsonl"
    run_calibration(plan, whole, FakePool(backend), progress=False)
    order = [(r.cell.key, r.question.qid) for r in answer_order(plan)]
    shards = [tmp_path / "c-1-of-2.jsonl", tmp_path / "c-2-of-2.jsonl"]
    for i, path in enumerate(shards, start=1):
        backend.calls.clear()
        assert (
            run_calibration(plan, path, FakePool(backend), batch=5, shard=(i, 2), progress=False)
            == 6
        )
        assert [len(call) for call in backend.calls] == [5, 1]  # the shard's own answers batched
        log = read_calibration(path)
        assert [(a["cell"], a["question_id"]) for a in log.answers] == order[i - 1 :: 2]
        assert log.header == read_calibration(whole).header
    merged = tmp_path / "new" / "merged.jsonl"  # its folder is made
    assert merge_calibrations(shards, merged) == 12
    assert read_calibration(merged).done == read_calibration(whole).done
    assert run_calibration(plan, merged, FakePool(backend), progress=False) == 0  # it resumes


def test_a_shard_skips_what_a_copied_log_holds(tmp_path) -> None:
    plan = plan_calibration(SETTINGS)
    backend = FakeBackend("smollm2", _knows_the_gold(plan, True))
    whole = tmp_path / "whole.jsonl"
    run_calibration(plan, whole, FakePool(backend), progress=False)
    lines = whole.read_bytes().split(b"\n")
    shard = tmp_path / "c-1-of-2.jsonl"
    shard.write_bytes(b"\n".join(lines[:6]) + b"\n")  # the first 5 answers of the order
    backend.calls.clear()
    # shard 1/2 is rows 0, 2, 4, ..., 10 of the order: 0, 2 and 4 are done
    assert run_calibration(plan, shard, FakePool(backend), shard=(1, 2), progress=False) == 3
    assert sum(len(call) for call in backend.calls) == 3
    assert len(read_calibration(shard).done) == 5 + 3


def test_a_shard_out_of_range_is_refused(tmp_path) -> None:
    plan = plan_calibration(SETTINGS)
    with pytest.raises(ValueError, match="1 <= i <= n"):
        run_calibration(plan, tmp_path / "c.jsonl", FakePool(), shard=(3, 2), progress=False)
    assert not (tmp_path / "c.jsonl").exists()


def test_a_copied_placeholder_is_counted_and_no_answer(tmp_path) -> None:
    plan = plan_calibration({**SETTINGS, "injections": "none"})
    backend = FakeBackend("smollm2", lambda p: "I would pick (A) first. The answer is (X).")
    run_calibration(plan, tmp_path / "c.jsonl", FakePool(backend), progress=False)
    (stats,) = cell_stats(read_calibration(tmp_path / "c.jsonl"))
    assert stats.placeholder.value == 1.0 and stats.answered.value == 0.0
    assert copied_placeholder(get_task("gsm8k"), "Packages of 2. The answer is N.")
    assert not copied_placeholder(get_task("gsm8k"), "2 + 3 = 5. The answer is 5.")


@pytest.mark.slow
def test_calibrate_end_to_end_on_the_tiny_offline_model(tmp_path, real_pool) -> None:
    """The real path: SmolLM2 answers (few tokens); every row is logged with its text and read
    back by the same extractor."""
    plan = plan_calibration({**SETTINGS, "n": 2, "max_tokens": 12, "backend": "transformers"})
    out = tmp_path / "c.jsonl"
    assert run_calibration(plan, out, real_pool, progress=False) == 6
    rows = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    task = get_task("logic3")
    for row in rows:
        assert 0 < row["n_tokens"] <= 12 and row["finish_reason"] in ("eos", "length")
        assert row["answer"] == task.extract(row["text"], finish_reason=row["finish_reason"])
    assert {r["injection"] for r in rows} == {"none", "moderate", "strong"}


@pytest.mark.slow
def test_a_llamacpp_calibration_flows_and_answers_what_static_batches_answer(
    tmp_path, real_pool
) -> None:
    """On llama.cpp the rows may flow (a finished answer's place is refilled at once); every
    answer is the one static batches write (each row samples with its own seed). Other engines
    are refused a flow."""
    from tests.support.llama import llama

    llama(real_pool, "smollm2")  # skips without llama-cpp-python
    settings = {**SETTINGS, "n": 3, "max_tokens": 12, "backend": "llamacpp"}
    settings["temperature"] = 0.7
    plan = plan_calibration(settings)
    static, flowing = tmp_path / "static.jsonl", tmp_path / "flow.jsonl"
    assert run_calibration(plan, static, real_pool, batch=4, progress=False) == 9
    assert run_calibration(plan, flowing, real_pool, batch=4, progress=False, flow=True) == 9

    def answers(path) -> dict:
        rows = [json.loads(line) for line in path.read_text().splitlines()[1:]]
        return {(r["cell"], r["question_id"]): (r["text"], r["n_tokens"]) for r in rows}

    assert answers(flowing) == answers(static)
    other = plan_calibration({**settings, "backend": "transformers"})
    with pytest.raises(RRError, match="llama.cpp"):
        run_calibration(other, tmp_path / "t.jsonl", real_pool, progress=False, flow=True)
