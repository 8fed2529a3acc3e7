"""A result row's optional `adversary`: rows name their strategy, strategies are different
configurations, a row that does not say is stored as NULL, and bad values are rejected."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from leaderboard import service
from leaderboard.db import run_transaction
from leaderboard.orm import ResultRecord
from rrdemo.report.submission import SubmissionRejected, parse_submission
from tests.support.samples import encode, result_row, submission


def test_rows_name_their_strategy_and_strategies_are_different_configs():
    rows = [result_row(adversary="static"), result_row(adversary="contextual")]
    parsed = parse_submission(encode(submission(rows)))
    assert [r.adversary for r in parsed.results] == ["static", "contextual"]
    same = [result_row(adversary="last-word"), result_row(adversary="last-word")]
    with pytest.raises(SubmissionRejected, match="results\\[1\\] repeats the configuration"):
        parse_submission(encode(submission(same)))
    no_field = parse_submission(encode(submission()))
    assert no_field.results[0].adversary is None


def test_an_unknown_strategy_is_rejected_with_a_reason():
    with pytest.raises(SubmissionRejected) as caught:
        parse_submission(encode(submission([result_row(adversary="sneaky")])))
    message = (
        "results[0].adversary: unknown adversary strategy; allowed: static, contextual, last-word"
    )
    assert any(message in reason for reason in caught.value.reasons), caught.value.reasons


def test_the_strategy_is_stored_and_a_row_that_does_not_say_is_null(factory):
    doc = submission([result_row(adversary="last-word", k=7), result_row(k=8)])
    run_transaction(factory, lambda s: service.store_submission(s, parse_submission(encode(doc))))
    stored = run_transaction(
        factory,
        lambda s: dict(s.execute(sa.select(ResultRecord.k, ResultRecord.adversary)).all()),
    )
    assert stored[7] == "last-word" and stored[8] is None
