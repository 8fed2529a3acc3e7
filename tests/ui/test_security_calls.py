"""Events outside the queue (`queue=False`) have their own per-client budget: the probe's
11,209 calls in 90 s from one address through `/gradio_api/run/predict` met no limit
(`ui.queue_limits.CallBudget`)."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import pytest
from gradio.context import LocalContext

from ui.queue_limits import CallBudget


def _request(address: str) -> SimpleNamespace:
    http = SimpleNamespace(scope={}, headers={}, client=SimpleNamespace(host=address), session={})
    return SimpleNamespace(request=http, username=None)


def test_a_client_past_its_minute_is_refused_and_others_are_not(monkeypatch) -> None:
    monkeypatch.delenv("SPACE_ID", raising=False)
    now = [0.0]
    budget = CallBudget(per_minute=5, clock=lambda: now[0])
    update = budget.limited(lambda value: value + 1)
    token = LocalContext.request.set(_request("10.0.0.66"))
    try:
        assert [update(i) for i in range(5)] == [1, 2, 3, 4, 5]
        with pytest.raises(gr.Error, match="at most 5 a minute from one visitor"):
            update(0)
        LocalContext.request.set(_request("10.0.0.2"))
        assert update(1) == 2  # another address has its own minute
        LocalContext.request.set(_request("10.0.0.66"))
        now[0] = 60.0  # the window slides: the first calls have left it
        assert update(1) == 2
    finally:
        LocalContext.request.reset(token)
    assert update(2) == 3  # outside an event (no request): not counted
