"""The app in a real headless chromium: pick a recorded setting, see coloured chunks stream, take a screenshot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.served import served_app as serving


@pytest.fixture
def browser_page(tmp_path: Path) -> Iterator:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"chromium not installed at {CHROMIUM} (run `make browser`)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            yield page
        finally:
            browser.close()


@pytest.fixture
def served_app(real_pool, tmp_path: Path) -> Iterator[str]:
    with serving(real_pool, tmp_path) as url:
        yield url


@pytest.mark.slow
@pytest.mark.browser
def test_preset_streams_coloured_chunks(browser_page, served_app: str, tmp_path: Path) -> None:
    page = browser_page
    page.goto(served_app, wait_until="domcontentloaded")
    page.locator("#rr-setting").wait_for(timeout=60_000)
    # Picking the first setting again fills the controls and replays its MAJ and RRMaj run.
    page.locator("#rr-setting input").click()
    page.locator('[role="option"]').first.click()
    # Corrupted chunks stream into the RRMaj panel; honest agents' answers into the MAJ panel.
    page.locator("#rr-rrmaj .rr-chunk.rr-corrupted").first.wait_for(timeout=300_000)
    page.locator("#rr-maj .rr-chunk.rr-honest").first.wait_for(timeout=300_000)
    # a preset replays its recording; read the colours once its panels stop being redrawn
    page.locator("#rr-rrmaj .rr-vote").wait_for(timeout=300_000)
    # Read from the page as it is at each poll: a chunk held across a redraw is detached, and a
    # detached element has no computed style ("").
    coloured = page.wait_for_function(
        """() => {
            const chunk = document.querySelector('#rr-rrmaj .rr-chunk.rr-corrupted');
            const colour = chunk && getComputedStyle(chunk).backgroundColor;
            return colour && !['rgba(0, 0, 0, 0)', 'transparent'].includes(colour) && colour;
        }""",
        timeout=30_000,
    ).json_value()
    assert coloured.startswith("rgb")  # really coloured
    assert page.locator("#rr-rrmaj .rr-legend").count() == 1
    assert "3c2t" in page.locator("#rr-status").inner_text()
    # The default preset lets everyone speak: honest agents write RR chunks too, and each
    # trajectory shows its who-wrote-what strip.
    page.locator("#rr-rrmaj .rr-chunk.rr-honest").first.wait_for(timeout=300_000)
    page.locator("#rr-rrmaj .rr-speakers").first.wait_for(timeout=300_000)  # once a chunk ends
    assert "shuffled order" in page.locator("#rr-status").inner_text()
    shot = tmp_path / "arena.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 20_000
    # Stop ends the run; the status stops changing.
    page.locator("#rr-stop").click()
    page.wait_for_timeout(1500)
    before = page.locator("#rr-status").inner_text()
    page.wait_for_timeout(2500)
    assert page.locator("#rr-status").inner_text() == before
