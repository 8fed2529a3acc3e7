"""A hostile visitor in a real headless chromium: what the page shows is text, never markup.

A model name made of HTML comes back in the error pop-up as the characters typed (no link, form
or image appears, no script runs); a path typed as the model gets the one refusal; an approved
submission whose submitter is markup shows in the board as typed, escaped once (`<svg`, never
`&lt;svg`). No model is loaded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard import hub_sync
from rrdemo.backends.pool import ModelPool
from rrdemo.report.submission import parse_submission
from tests.support.samples import encode, result_row, submission
from tests.support.served import TOKEN, ServedApp, serve_app
from tests.ui.test_app_browser import browser_page  # noqa: F401 - the chromium fixture

pytestmark = pytest.mark.browser

HOSTILE_MODEL = '<img src="x" onerror="window.pwned=1"><a href="https://example.com">go</a>'
HOSTILE_NAME = "<svg onload=window.pwned=2>mallory"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[ServedApp]:
    yield from serve_app(ModelPool(public=True, max_models=1), tmp_path)


def _type_model_and_run(page, name: str) -> str:
    """Type `name` in the Arena's model box, press Run, return the error pop-up's text."""
    box = page.get_by_label("Model (all agents)")
    box.fill(name)
    box.press("Enter")
    page.locator("#rr-run").click()
    toast = page.locator(".toast-body").last
    toast.wait_for(timeout=60_000)
    return toast.inner_text()


def test_errors_and_board_show_text_never_markup(browser_page, served: ServedApp) -> None:  # noqa: F811
    accepted = hub_sync.submit_recorded(
        served.store, parse_submission(encode(submission([result_row()], submitter=HOSTILE_NAME)))
    )
    hub_sync.moderate_recorded(served.store, accepted.submission_id, "approve", TOKEN)
    page = browser_page
    page.goto(served.url, wait_until="domcontentloaded")
    page.get_by_text("Set up your own run").click()  # the run controls are folded at first
    page.locator("#rr-run").wait_for(timeout=60_000)

    shown = _type_model_and_run(page, HOSTILE_MODEL)
    assert HOSTILE_MODEL in shown and "is not allowed here" in shown
    toasts = page.locator(".toast-body")
    assert toasts.locator("img, a, form").count() == 0  # the markup is text, not elements
    assert page.evaluate("() => window.pwned") is None

    assert "is not allowed here" in _type_model_and_run(page, "/etc/passwd")

    page.get_by_role("tab", name="Leaderboard").click()
    cell = page.locator(".cell-wrap", has_text="mallory").first
    cell.wait_for(state="attached", timeout=60_000)
    assert cell.text_content().strip() == HOSTILE_NAME  # escaped once: `<svg`, not `&lt;svg`
    assert page.locator("svg[onload]").count() == 0
    assert page.evaluate("() => window.pwned") is None
