"""The Arena's first screen in real chromium, at a laptop's and a phone's viewport: the question
with its options, a definition of MAJ and RRMaj, the result line and both panels lie inside the
first viewport of a freshly started app; the
result line and the chooser's labels say what the committed runs measured; the chooser and the
folded run controls are reachable, the chooser by keyboard too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rrdemo.gallery import load_gallery
from tests.support.browser import browser  # noqa: F401 (the chromium fixture)
from tests.support.served import served_app
from tests.ui.test_arena_chooser import claims_rescue, committed_interval

VIEWPORTS = ((1400, 900), (390, 844))  # a laptop, a phone
FIRST_SCREEN = ("#rr-question", "#rr-result", "#rr-maj", "#rr-rrmaj")


@pytest.fixture
def fresh_url(tmp_path) -> Iterator[str]:
    from rrdemo.backends.pool import ModelPool

    with served_app(ModelPool(), tmp_path) as url:  # nothing loaded: the page opens on a recording
        yield url


def decided(page) -> None:
    """Until both methods' decisions of the opening recording are in the verdict line."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('#rr-verdict .rr-verdict')]"
        ".filter(el => /correct|fooled|wrong|no answer/.test(el.innerText)).length >= 2",
        timeout=120_000,
    )


def option_texts(page, dropdown: str) -> list[str]:
    """The labels a dropdown offers, read from the opened list."""
    page.locator(f"{dropdown} input").click()
    options = page.locator('[role="option"]')
    options.first.wait_for(timeout=10_000)
    texts = [options.nth(i).get_attribute("aria-label") for i in range(options.count())]
    page.keyboard.press("Escape")
    return texts


@pytest.mark.slow
@pytest.mark.browser
def test_the_first_screen_shows_the_run_and_what_its_whole_run_found(browser, fresh_url) -> None:  # noqa: F811
    gallery = load_gallery()
    opening = gallery.settings[0]
    outcome = opening.outcome()
    for width, height in VIEWPORTS:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(fresh_url, wait_until="domcontentloaded")
        decided(page)
        assert page.evaluate("() => window.scrollY") == 0
        for selector in FIRST_SCREEN:  # no scrolling needed: each lies inside the first screen
            box = page.locator(selector).bounding_box()
            assert box is not None and box["height"] > 40, (selector, width)
            assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (selector, width, box)
            assert box["y"] >= 0 and box["y"] + box["height"] <= height + 1, (selector, width, box)
        # The question's options, (A) to (E) for the opening AQuA question, are in view, and
        # so is a definition of MAJ and RRMaj (one line on a phone).
        options = page.locator("#rr-question .rr-option")
        letters = [options.nth(i).inner_text()[:3] for i in range(options.count())]
        assert letters == ["(A)", "(B)", "(C)", "(D)", "(E)"], (letters, width)
        for i in range(options.count()):
            box = options.nth(i).bounding_box()
            assert box is not None and options.nth(i).is_visible(), (i, width)
            assert box["y"] >= 0 and box["y"] + box["height"] <= height + 1, (i, width, box)
        intro = "#rr-intro-phone" if width < 640 else "#rr-intro"
        assert page.locator(intro).is_visible(), width
        words = page.locator(intro).inner_text()
        assert "MAJ" in words and "RRMaj" in words, words
        box = page.locator(intro).bounding_box()
        assert box is not None and box["y"] + box["height"] <= height, (intro, box)
        page.locator("#rr-maj .rr-recorded").wait_for()  # the panels play the recording
        result = page.locator("#rr-result").inner_text()
        assert f"{outcome.row.questions} questions" in result and outcome.counts() in result
        assert outcome.difference() in result and outcome.finding in result
        page.close()

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(fresh_url, wait_until="domcontentloaded")
    decided(page)
    # The chooser: a handful of settings, named by setting with their committed outcome.
    labels = option_texts(page, "#rr-setting")
    group = gallery.groups()[next(iter(gallery.groups()))]
    assert 1 <= len(labels) <= 8 and len(labels) == len(group)
    for i, label in zip(group, labels, strict=True):
        _, lo, _ = committed_interval(gallery.settings[i])
        assert not claims_rescue(label) or lo > 0, label
        assert label == gallery.settings[i].label(grouped=True)
    page.get_by_text("Older recordings").click()  # the kept-aside ones, behind a disclosure
    shelved = option_texts(page, "#rr-shelf")
    assert shelved and all("old prompt" in s or "SmolLM2" in s for s in shelved)
    for label in shelved:
        setting = next(s for s in gallery.settings if s.label() == label)
        assert not claims_rescue(label) or committed_interval(setting)[1] > 0, label
    # By keyboard: another setting plays, and the result line follows it.
    page.locator("#rr-setting input").focus()
    for key in ("ArrowDown", "ArrowDown", "Enter"):
        page.keyboard.press(key)
    page.wait_for_function(
        "text => !document.querySelector('#rr-result').innerText.includes(text)",
        arg=outcome.counts(),
        timeout=30_000,
    )
    chosen = page.locator("#rr-setting input").input_value()
    (now,) = [
        gallery.settings[i] for i in group if gallery.settings[i].label(grouped=True) == chosen
    ]
    assert now is not opening and now.outcome().counts() in page.locator("#rr-result").inner_text()
    # The run controls are folded under "Set up your own run", and open.
    assert not page.locator("#rr-run").is_visible()
    page.get_by_text("Set up your own run").click()
    page.locator("#rr-run").wait_for(timeout=10_000)
    page.close()
