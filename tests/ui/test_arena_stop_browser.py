"""Stop in real chromium, during a live run of a real offline model: a run started from the
set-up panel brings the panels into view, the Stop beside its Run button stops it, and within
5 s the status line ends and the panels say "stopped" instead of "writing…"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.served import served_app as serving
from tests.ui.test_app_browser import browser_page  # noqa: F401  (a fixture)

IN_VIEW = """() => {
  const box = document.getElementById('rr-question').getBoundingClientRect();
  return box.top >= 0 && box.top < window.innerHeight;
}"""
STOPPED = """() => {
  const status = document.querySelector('#rr-status').innerText;
  const panels = document.querySelector('#rr-maj').innerText + document.querySelector('#rr-rrmaj').innerText;
  return status.includes('Stopped') && panels.includes('stopped') && !panels.includes('writing…');
}"""

SHOWN = """() => ({
  status: document.querySelector('#rr-status').innerText,
  writing: (document.querySelector('#rr-maj').innerText.match(/writing…/g) || []).length
    + (document.querySelector('#rr-rrmaj').innerText.match(/writing…/g) || []).length,
  stopped: (document.querySelector('#rr-maj').innerText.match(/stopped/g) || []).length
    + (document.querySelector('#rr-rrmaj').innerText.match(/stopped/g) || []).length,
})"""


@pytest.fixture
def served_app(real_pool, tmp_path: Path) -> Iterator[str]:
    with serving(real_pool, tmp_path) as url:
        yield url


@pytest.mark.slow
@pytest.mark.browser
def test_stop_during_a_live_run_shows_stopped_within_5_s(browser_page, served_app) -> None:  # noqa: F811
    page = browser_page
    page.goto(served_app, wait_until="domcontentloaded")
    page.get_by_text("Set up your own run").click()
    model = page.get_by_label("Model (all agents)")
    model.fill("smollm2")
    model.press("Enter")
    page.locator("#rr-run").click()
    page.wait_for_function(IN_VIEW, timeout=10_000)  # the panels are brought into view
    # the live run writes (its first chunks replace the recording's panels)
    page.wait_for_function(
        "() => document.querySelector('#rr-status').innerText.includes('Running ·')"
        " && document.querySelector('#rr-rrmaj').innerText.includes('writing…')",
        timeout=300_000,
    )
    # The Stop beside the Run that started it, pressed from the keyboard: the panels grow as the
    # run writes and move the button, so a pointer click can wait for it to hold still.
    page.locator("#rr-stop-setup").press("Enter")
    page.wait_for_function(STOPPED, timeout=5_000)
    assert "Live run" in page.locator("#rr-result").inner_text()
    page.wait_for_timeout(3_000)  # nothing the cancelled run still sends undoes it
    assert page.evaluate(STOPPED), page.evaluate(SHOWN)
