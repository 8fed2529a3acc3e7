"""A result row's optional `prompt_style` and `eos_policy`: rows name them, another value is
another configuration and null counts as the default, bad values are refused naming the allowed
ones, and the board (the CLI's `list` and `rank`) shows them, "-" where a row does not say."""

from __future__ import annotations

import json
import re

import pytest
import sqlalchemy as sa

from leaderboard import service
from leaderboard.db import run_transaction
from leaderboard.orm import ResultRecord
from rrdemo.report.submission import SubmissionRejected, parse_submission
from tests.support.samples import encode, result_row, submission

STATED = {"prompt_style": "step-by-step", "eos_policy": "pass"}
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"  # result_row's


def test_rows_name_them_and_a_row_that_does_not_say_is_the_default_configuration() -> None:
    rows = [result_row(**STATED), result_row(prompt_style="step-by-step"), result_row()]
    parsed = parse_submission(encode(submission(rows)))
    assert [(r.prompt_style, r.eos_policy) for r in parsed.results] == [
        ("step-by-step", "pass"),
        ("step-by-step", None),
        (None, None),
    ]
    for default in ({"prompt_style": "direct"}, {"eos_policy": "end"}):
        with pytest.raises(SubmissionRejected, match=r"results\[1\] repeats the configuration"):
            parse_submission(encode(submission([result_row(), result_row(**default)])))


@pytest.mark.parametrize(
    "field, value, message",
    [
        (
            "prompt_style",
            "verbose",
            "results[0].prompt_style: unknown prompt style; allowed: direct, step-by-step",
        ),
        (
            "eos_policy",
            "stop",
            "results[0].eos_policy: unknown end-of-sequence policy; allowed: end, pass",
        ),
    ],
)
def test_an_unknown_value_is_refused_naming_the_allowed_ones(field, value, message) -> None:
    with pytest.raises(SubmissionRejected) as caught:
        parse_submission(encode(submission([result_row(**{field: value})])))
    assert caught.value.reasons == [message]


def _approved(factory, rows: list[dict]) -> None:
    doc = parse_submission(encode(submission(rows)))
    run_transaction(factory, lambda s: service.store_submission(s, doc, status="approved"))


def test_they_are_stored_and_a_row_that_does_not_say_is_null(factory) -> None:
    _approved(factory, [result_row(k=7, **STATED), result_row(k=8)])
    columns = (ResultRecord.k, ResultRecord.prompt_style, ResultRecord.eos_policy)
    stored = run_transaction(factory, lambda s: s.execute(sa.select(*columns)).all())
    assert sorted(r for r in stored if r[0] in (7, 8)) == [
        (7, "step-by-step", "pass"),
        (8, None, None),
    ]


def test_the_cli_lists_and_ranks_them_with_a_dash_where_a_row_does_not_say(factory, capsys) -> None:
    from leaderboard.cli import main

    _approved(
        factory,
        [
            result_row(**STATED),
            result_row(n_corrupted=1, n_honest=4, corrupted_agents=[0], **STATED),
        ],
    )
    assert main(["list", "--format", "table", "--task", "gsm8k", "--config", "3c2t"]) == 0
    header, *lines = capsys.readouterr().out.splitlines()
    starts = [(m.group(), m.start()) for m in re.finditer(r"\S+", header)]  # aligned columns
    ends = [start for _, start in starts[1:]] + [None]
    cells = [
        {name: line[start:end].strip() for (name, start), end in zip(starts, ends, strict=True)}
        for line in lines
    ]
    shown = {(c["model"], c["source"], c["prompt_style"], c["eos_policy"]) for c in cells}
    assert (MODEL, "local_run", "step-by-step", "pass") in shown
    assert {(s, p, e) for _, s, p, e in shown if s == "paper"} == {("paper", "-", "-")}

    assert main(["list", "--format", "json", "--model", MODEL]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {(r["prompt_style"], r["eos_policy"]) for r in listed} == {("step-by-step", "pass")}

    assert main(["rank", "--format", "json", "--task", "gsm8k"]) == 0
    ranked = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert (ranked[MODEL]["prompt styles"], ranked[MODEL]["EOS policies"]) == (
        "step-by-step",
        "pass",
    )
    paper = next(r for name, r in ranked.items() if name != MODEL)
    assert (paper["prompt styles"], paper["EOS policies"]) == ("-", "-")
