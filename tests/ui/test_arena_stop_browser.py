"""Stop in real chromium, during a live run of a real offline model: a run started from the
set-up panel brings the panels into view, the Stop beside its Run button stops it, and within
5 s the status line ends and the panels say "stopped" instead of "writing…".

The page's opening recording is made to play for minutes, so the run starts while it plays (as
it does for a quick visitor on a quiet server): from the run's first frame on, the recording
never writes the panels again, before or after Stop."""

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

# Every status line shown from the run's first frame on, in order (a MutationObserver).
WATCH = """() => {
  window.rrStatuses = [];
  const status = document.querySelector('#rr-status');
  const seen = () => {
    const text = status.innerText;
    if (window.rrStatuses.length || text.includes('Loading') || text.includes('Running')) {
      window.rrStatuses.push(text.slice(0, 60));
    }
  };
  new MutationObserver(seen).observe(status, {subtree: true, childList: true, characterData: true});
}"""

SHOWN = """() => ({
  status: document.querySelector('#rr-status').innerText,
  writing: (document.querySelector('#rr-maj').innerText.match(/writing…/g) || []).length
    + (document.querySelector('#rr-rrmaj').innerText.match(/writing…/g) || []).length,
  stopped: (document.querySelector('#rr-maj').innerText.match(/stopped/g) || []).length
    + (document.querySelector('#rr-rrmaj').innerText.match(/stopped/g) || []).length,
})"""


@pytest.fixture
def served_app(real_pool, tmp_path: Path, monkeypatch) -> Iterator[str]:
    monkeypatch.setattr("ui.replay.OPENING_PACE", 20.0)  # the opening recording plays 4 minutes
    with serving(real_pool, tmp_path) as url:
        yield url


@pytest.mark.slow
@pytest.mark.browser
def test_stop_during_a_live_run_shows_stopped_within_5_s(browser_page, served_app) -> None:  # noqa: F811
    page = browser_page
    page.goto(served_app, wait_until="domcontentloaded")
    page.wait_for_function(
        "() => document.querySelector('#rr-status')?.innerText.includes('playing back')"
    )
    page.evaluate(WATCH)
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
    # On a loaded machine the page can be busy redrawing the growing panels for a while before
    # it takes the key: the wait is for the page, the 5 s below is for the Stop itself.
    page.locator("#rr-stop-setup").press("Enter", timeout=120_000)
    page.wait_for_function(STOPPED, timeout=5_000)
    assert "Live run" in page.locator("#rr-result").inner_text()
    page.wait_for_timeout(3_000)  # nothing the cancelled run still sends undoes it
    assert page.evaluate(STOPPED), page.evaluate(SHOWN)
    statuses = page.evaluate("() => window.rrStatuses")
    assert statuses and not [s for s in statuses if "Recorded" in s], statuses
