"""Units run together: model calls of worker threads merged into one batch, results unchanged."""

from __future__ import annotations

import json
import threading

import pytest

from rrdemo.backends.base import Finished
from rrdemo.runs.gang import Gang, GangModels
from rrdemo.runs.runner import run_plan
from tests.rrdemo.runs.test_runner import assert_exactly_once
from tests.support.fakes import fake_plan, fake_pool


def _content(path) -> dict:
    """Each unit's records without what timing and run ids change."""
    units: dict = {}
    for line in path.read_text().splitlines()[1:]:
        record = json.loads(line)
        record.pop("compute", None)
        record.pop("wall_s", None)
        key = (record["condition"], record["question_id"], record.get("method"))
        units.setdefault(key, []).append(json.dumps(record, sort_keys=True))
    return {k: sorted(v) for k, v in units.items()}


def test_units_run_together_write_what_they_write_alone(tmp_path):
    plan = fake_plan(labels=("0c3t", "2c1t", "1c2t"))
    alone, together = tmp_path / "alone.jsonl", tmp_path / "together.jsonl"
    run_plan(plan, alone, fake_pool(), progress=False)
    pool = fake_pool()
    summary = run_plan(plan, together, pool, progress=False, workers=4)
    assert summary.units_run == plan.n_units
    assert_exactly_once(together, plan)
    assert _content(together) == _content(alone)
    # the model saw fewer, bigger calls: several units' requests in one batch
    sizes = [len(call) for call in pool.backends["obey"].calls]
    assert max(sizes) > plan.conditions[0].config.resolved_m


def test_a_resumed_run_with_workers_runs_only_what_is_missing(tmp_path):
    plan = fake_plan()
    log = tmp_path / "run.jsonl"
    with pytest.raises(RuntimeError, match="simulated crash"):
        run_plan(plan, log, fake_pool(fail_after=60), progress=False, workers=3)
    lines = log.read_text().splitlines()
    done_before = sum(json.loads(line)["type"] == "done" for line in lines)
    assert 0 < done_before < plan.n_units
    summary = run_plan(plan, log, fake_pool(), progress=False, workers=3)
    assert summary.units_skipped == done_before
    assert_exactly_once(log, plan)


def test_workers_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="at least 1"):
        run_plan(fake_plan(), tmp_path / "x.jsonl", fake_pool(), progress=False, workers=0)


class _Echo:
    """A backend stand-in that finishes each request with its own prompt."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def generate(self, requests):
        self.calls.append(len(requests))
        for i, r in enumerate(requests):
            yield Finished(i, r.prompt, 1, "eos", 0, 1)


def _request(prompt):
    from rrdemo.backends.base import GenerationRequest
    from rrdemo.config import Sampling

    return GenerationRequest(("k", prompt), prompt, 1, Sampling(), seed=0)


def test_the_gang_waits_for_every_member_and_routes_outputs_back():
    gang, echo = Gang(), _Echo()
    source = GangModels(type("Pool", (), {"get": lambda self, *a, **k: echo})(), gang)
    backend = source.get("m")
    got: dict[int, list[str]] = {}

    def member(n: int) -> None:
        try:
            outputs = list(backend.generate([_request(f"{n}-{j}") for j in range(n)]))
            got[n] = [o.text for o in outputs if isinstance(o, Finished)]
        finally:
            gang.leave()

    threads = [threading.Thread(target=member, args=(n,)) for n in (1, 2, 3)]
    for _ in threads:
        gang.join()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert echo.calls == [6]  # one call for all three members
    assert got == {n: [f"{n}-{j}" for j in range(n)] for n in (1, 2, 3)}
    assert source.get("m") is backend


def test_a_model_failure_reaches_every_waiting_member():
    class Broken:
        def generate(self, requests):
            raise RuntimeError("out of memory")
            yield

    gang = Gang()
    backend = GangModels(type("Pool", (), {"get": lambda self, *a, **k: Broken()})(), gang).get("m")
    errors = []

    def member() -> None:
        try:
            list(backend.generate([_request("x")]))
        except RuntimeError as error:
            errors.append(str(error))
        finally:
            gang.leave()

    threads = [threading.Thread(target=member) for _ in range(2)]
    for _ in threads:
        gang.join()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == ["out of memory"] * 2


@pytest.mark.slow
def test_real_model_units_run_together(tmp_path, real_pool):
    from rrdemo.runs.spec import plan_sweep

    plan = plan_sweep(
        {
            "tasks": "logic3",
            "configs": "1c1t",
            "strengths": "strong",
            "k": 4,
            "max_tokens": 8,
            "n": 3,
            "m_star": 2,
            "temperature": 0.0,
        }
    )
    log = tmp_path / "real.jsonl"
    summary = run_plan(plan, log, real_pool, progress=False, workers=3)
    assert summary.units_run == 3
    assert_exactly_once(log, plan)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    questions = {r["question_id"]: r for r in records if r["type"] == "done"}
    # each trajectory was written for its own question: the chunks' prompt-free text is the
    # continuation of that question's agents (their first turns differ across questions)
    firsts = {
        r["question_id"]: r["chunks"][0]["text"]
        for r in records
        if r["type"] == "trajectory" and r["method"] == "RRMaj" and r["trajectory"] == 0
    }
    assert set(firsts) == set(questions)


# -- shards ---------------------------------------------------------------------------------------
def test_shards_split_a_sweep_and_merge_into_the_whole(tmp_path):
    from rrdemo.runs.log import read_log
    from rrdemo.runs.write import merge_logs

    plan = fake_plan(labels=("0c3t", "2c1t", "1c2t"))
    whole = tmp_path / "whole.jsonl"
    run_plan(plan, whole, fake_pool(), progress=False)
    shards = [tmp_path / f"shard{i}.jsonl" for i in (1, 2)]
    ran = [
        run_plan(plan, s, fake_pool(), progress=False, shard=(i, 2)).units_run
        for i, s in zip((1, 2), shards, strict=True)
    ]
    assert sum(ran) == plan.n_units and min(ran) >= plan.n_units // 2
    assert not read_log(shards[0]).done & read_log(shards[1]).done
    merged = tmp_path / "new" / "merged.jsonl"  # its folder is made
    assert merge_logs(shards, merged) == plan.n_units
    assert_exactly_once(merged, plan)
    assert _content(merged) == _content(whole)
    # merging again with an overlapping copy keeps each unit once; the merged log resumes
    assert merge_logs([merged, shards[0]], merged) == plan.n_units
    assert_exactly_once(merged, plan)
    assert run_plan(plan, merged, fake_pool(), progress=False).units_run == 0


def test_logs_of_different_sweeps_are_not_merged(tmp_path):
    from rrdemo.errors import RRError
    from rrdemo.runs.write import merge_logs

    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run_plan(fake_plan(labels=("0c3t",)), a, fake_pool(), progress=False)
    run_plan(fake_plan(labels=("2c1t",)), b, fake_pool(), progress=False)
    out = tmp_path / "out.jsonl"
    with pytest.raises(RRError, match="different sweep"):
        merge_logs([a, b], out)
    assert not out.exists()


def test_cli_shard_must_be_i_of_n(tmp_path, capsys):
    from rrdemo.cli import main as cli_main

    for bad in ("3/2", "0/2", "x", "1-2"):
        code = cli_main(
            [
                "experiment",
                "--tasks",
                "logic3",
                "--configs",
                "0c1t",
                "--n",
                "1",
                "--shard",
                bad,
                "--out",
                str(tmp_path / "x.jsonl"),
            ]
        )
        assert code == 2
        assert "--shard" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()
