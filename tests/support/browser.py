"""One headless chromium for a browser test module (playwright over Debian's chromium).

`browser` is the fixture: a test module imports it (`from tests.support.browser import browser`,
with `# noqa: F401` beside it and `# noqa: F811` on the tests that take it) and opens its own
pages at the viewports it needs. It skips, saying how to get one, where chromium or playwright is
missing."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("RRDEMO_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def launched() -> Iterator:
    """A chromium launched for as long as the generator runs; skips where there is none."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"chromium not installed at {CHROMIUM} (run `make browser`)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser() -> Iterator:
    """One chromium per test module: each test opens (and may close) its own pages."""
    yield from launched()
