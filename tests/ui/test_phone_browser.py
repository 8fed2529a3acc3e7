"""Every tab read on a phone (390 x 844) and a laptop (1400 x 900) in real chromium, measured
from the DOM (`tests.support.layout_checks`): no word broken across lines, no plot title over
another, no legend over its plot or an axis title, no table running off the screen without a way
to scroll to it. The board seeds the committed evidence runs, as the Space shows them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import browser  # noqa: F401 (the chromium fixture)
from tests.support.layout_checks import BROKEN_WORDS, CUT_TABLES, OVERLAPS
from tests.support.served import serve_app

ROOT = Path(__file__).resolve().parents[2]
TABS = ("Arena", "Experiments", "Theory", "Leaderboard", "About")
VIEWPORTS = ((390, 844), (1400, 900))


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator:
    from rrdemo.backends.pool import ModelPool

    folder = tmp_path_factory.mktemp("phone")
    yield from serve_app(ModelPool(), folder, ROOT / "leaderboard" / "project_runs")


def _open(page, tab: str) -> None:
    """Open a tab; on a phone the last tabs sit behind the tab bar's "More tabs" menu."""
    page.get_by_role("tab").first.wait_for(timeout=60_000)  # the tab bar is drawn
    shown = page.get_by_role("tab", name=tab)
    if shown.is_visible():
        shown.click()
    else:
        page.locator("button[aria-label='More tabs']").click()
        page.get_by_role("button", name=tab, exact=True).last.click()
    page.get_by_role("tab", name=tab, selected=True).wait_for(timeout=30_000)


READY = {  # what each tab draws last
    "Arena": "#rr-rrmaj .rr-vote",
    "Experiments": "#rr-calibration-note",
    "Theory": ".js-plotly-plot:visible",
    "Leaderboard": "#lb-rows [role='gridcell']",
    "About": "#rr-about table",
}


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("width, height", VIEWPORTS, ids=lambda v: str(v))
def test_every_tab_reads_whole_words_and_nothing_covers_anything(
    browser,  # noqa: F811
    served,
    width: int,
    height: int,
) -> None:
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(served.url, wait_until="domcontentloaded")
    found = {}
    for tab in TABS:
        _open(page, tab)
        page.locator(READY[tab]).first.wait_for(timeout=120_000)
        page.wait_for_timeout(1500)  # plots draw after their data lands
        if tab in ("Theory", "Leaderboard"):
            assert page.locator(".js-plotly-plot .nsewdrag").count() >= 1, tab  # measured
        found[tab] = {
            name: page.evaluate(check, "body")
            for name, check in (("broken", BROKEN_WORDS), ("overlaps", OVERLAPS),
                                ("cut", CUT_TABLES))
        }  # fmt: skip
    page.close()
    assert all(not v for checks in found.values() for v in checks.values()), found
