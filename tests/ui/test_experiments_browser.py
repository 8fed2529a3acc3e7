"""The Experiments tab in real chromium, on the real app over a deliberately slow scripted engine:
Stop says "stopped" at once with how many question runs finished."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from tests.support.browser import browser  # noqa: F401 (the chromium fixture)
from tests.support.fakes import FakeBackend, FakePool, obeys_injection
from tests.support.served import serve_app

PER_TOKEN_S = 0.02  # the slowed engine: a question run of this sweep takes a few seconds


class SlowBackend(FakeBackend):
    """The scripted agents, each decoding step taking `PER_TOKEN_S`: a machine under load."""

    def generate(self, requests):
        for output in super().generate(requests):
            time.sleep(PER_TOKEN_S)
            yield output


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator:
    pool = FakePool(SlowBackend("smollm2", obeys_injection))  # the registry's name, fake agents
    yield from serve_app(pool, tmp_path_factory.mktemp("experiments"))


def _status(page) -> str:
    return page.locator("#rr-sweep-status").inner_text()


@pytest.mark.slow
@pytest.mark.browser
def test_stop_in_experiments_says_stopped_with_the_runs_that_finished(browser, served) -> None:  # noqa: F811
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(served.url, wait_until="domcontentloaded")
    page.get_by_role("tab", name="Experiments").click()
    page.locator("#rr-sweep-run").click()
    # a question run of the sweep (the tab's defaults: 4 settings x 2 questions) finished
    page.wait_for_function(
        "() => /[1-7] \\/ 8 question runs/.test("
        "document.querySelector('#rr-sweep-status')?.innerText || '')",
        timeout=120_000,
    )
    page.locator("#rr-sweep-stop").click()
    pressed = time.monotonic()
    page.wait_for_function(
        "() => /Stopped/.test(document.querySelector('#rr-sweep-status')?.innerText || '')",
        timeout=10_000,
    )
    waited = time.monotonic() - pressed
    print(f"Stop to 'Stopped' in the Experiments tab: {waited:.2f} s")
    shown = _status(page)
    found = re.search(r"(\d+) of 8 question runs finished", shown)
    assert found and 1 <= int(found.group(1)) < 8, shown
    page.wait_for_timeout(3000)  # the sweep has stopped: nothing overwrites the line
    assert "Stopped" in _status(page), _status(page)
    page.close()


def _text(page, selector: str) -> str:
    return page.locator(selector).inner_text()


@pytest.mark.slow
@pytest.mark.browser
def test_the_time_is_stated_beside_each_run_button_then_counted_then_set_beside_the_actual(
    browser,  # noqa: F811
    served,
) -> None:
    """Beside Run live (the opening recording's config) and Run sweep, the expected time; a model
    with no measured speed says how its time will be measured; while the sweep runs its status
    gives the time left at its pace, and at the end the time taken beside the estimate."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(served.url, wait_until="domcontentloaded")
    live = page.locator("#rr-live-time")
    live.wait_for(timeout=60_000)
    assert re.match(
        r"Expected time: (about|at most) \d+ (s|min) on this machine", live.inner_text()
    )
    page.get_by_role("tab", name="Experiments").click()
    timed = page.locator("#rr-sweep-time")
    assert _text(page, "#rr-sweep-time").startswith("Expected time: about "), timed.inner_text()
    model = page.locator("#rr-sweep-model input")
    model.fill("someone/unlisted-model")
    model.press("Enter")
    page.wait_for_function(
        "() => /not known before it starts/.test("
        "document.querySelector('#rr-sweep-time')?.innerText || '')",
        timeout=10_000,
    )
    model.fill("smollm2")
    model.press("Enter")
    page.wait_for_function(
        "() => /Expected time: about/.test("
        "document.querySelector('#rr-sweep-time')?.innerText || '')",
        timeout=10_000,
    )
    page.locator("#rr-sweep-run").click()
    page.wait_for_function(
        "() => /left \\(at this run's pace\\)/.test("
        "document.querySelector('#rr-sweep-status')?.innerText || '')",
        timeout=120_000,
    )
    page.wait_for_function(
        "() => /8 \\/ 8 question runs done/.test("
        "document.querySelector('#rr-sweep-status')?.innerText || '')",
        timeout=300_000,
    )
    shown = _text(page, "#rr-sweep-status")
    assert re.search(r"took \d+ (s|min \d+ s) \(expected about \d+ (s|min)\)", shown), shown
    page.close()
