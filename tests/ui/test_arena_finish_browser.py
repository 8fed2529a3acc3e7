"""The Arena in real chromium on a freshly started app (nothing loaded): what a visitor meets
first and when a model cannot be had. An unknown hub model is one sentence naming the models this
machine has, the status line stops saying "Loading", and the hub library's text never reaches
the page."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rrdemo.backends.registry import REGISTRY
from tests.support.browser import browser  # noqa: F401 (the chromium fixture)
from tests.support.served import serve_app
from tests.ui.test_arena_first_screen_browser import decided


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator:
    from rrdemo.backends.pool import ModelPool

    yield from serve_app(ModelPool(public=True), tmp_path_factory.mktemp("arena"))


@pytest.mark.slow
@pytest.mark.browser
def test_an_unknown_model_is_one_sentence_and_the_status_line_ends(
    browser,  # noqa: F811
    served,
    monkeypatch,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the hub cannot be reached from here
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(served.url, wait_until="domcontentloaded")
    decided(page)
    page.get_by_text("Set up your own run").click()
    field = page.locator("#rr-model input")
    field.fill("no-such/model-xyz")
    field.press("Enter")
    page.locator("#rr-run").click()
    toast = page.locator(".toast-body")
    toast.first.wait_for(timeout=120_000)
    said = toast.first.inner_text()
    shipped = [n for n, i in REGISTRY.items() if i.offline]
    assert "no-such/model-xyz" in said and all(name in said for name in shipped), said
    page.wait_for_function(
        "() => /Not run/.test(document.querySelector('#rr-status').innerText)", timeout=30_000
    )
    status = page.locator("#rr-status").inner_text()
    assert "Loading" not in status and "no-such/model-xyz" in status, status
    text = page.locator("body").inner_text()
    assert "HF_HUB" not in text and "snapshot" not in text, text
    page.screenshot(path=str(served.folder / "unknown-model.png"), full_page=True)
    page.close()


def _inside(inner: dict | None, outer: dict | None) -> bool:
    return (
        inner is not None
        and outer is not None
        and inner["y"] >= outer["y"] - 1
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 1
    )


@pytest.mark.slow
@pytest.mark.browser
def test_one_meter_legend_run_live_in_view_and_answers_in_the_phones_panels(
    browser,  # noqa: F811
    served,
) -> None:
    for width, height in ((1400, 900), (390, 844)):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(served.url, wait_until="domcontentloaded")
        decided(page)
        page.locator("#rr-rrmaj .rr-vote").wait_for(timeout=60_000)
        panels = page.locator("#rr-maj").inner_text() + page.locator("#rr-rrmaj").inner_text()
        if width > 640:  # the meter's charts and their one legend, under the answers
            assert page.locator("#rr-maj .rr-zline").count() >= 2
            assert page.locator(".rr-meter-legend").count() == 1
            assert panels.count("logit p(gold)") == 1, panels
            # Run live and Stop without scrolling
            for button in ("#rr-run-live", "#rr-stop"):
                box = page.locator(button).bounding_box()
                assert box is not None and box["y"] + box["height"] <= height, (button, box)
        else:  # each panel shows an answer's text inside its own first view
            for panel in ("#rr-maj", "#rr-rrmaj"):
                outer = page.locator(panel).bounding_box()
                chunk = page.locator(f"{panel} .rr-chunk").first
                assert chunk.inner_text().strip(), panel
                assert _inside(chunk.bounding_box(), outer), (panel, outer)
                assert outer["y"] + outer["height"] <= height + 1, (panel, outer)
        page.close()
