"""Retake the Arena's screenshots: a freshly started app's first screen, as a visitor sees it
without scrolling, at a laptop's and a phone's viewport, once the opening recording has decided.

RRDEMO_CACHE_DIR=... HF_HUB_OFFLINE=1 .venv/bin/python -m tools.screenshot_arena [OUT_FOLDER]

writes OUT_FOLDER/screenshot_arena_1400x900.png and screenshot_arena_390x844.png (default
assets/). The app is served as `python app.py` serves it (`app.serve`), with no model loaded.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]
VIEWPORTS = {"1400x900": (1400, 900), "390x844": (390, 844)}  # a laptop, a phone


def shot_name(viewport: str) -> str:
    return f"screenshot_arena_{viewport}.png"


def wait_for_decision(page, timeout_ms: float = 120_000) -> None:
    """Until both methods' decisions of the opening recording show in the verdict line."""
    page.wait_for_function(
        "() => [...document.querySelectorAll('#rr-verdict .rr-verdict')]"
        ".filter(el => /correct|fooled|wrong|no answer/.test(el.innerText)).length >= 2",
        timeout=timeout_ms,
    )


@contextmanager
def fresh_app() -> Iterator[str]:
    """A freshly started app, served as `python app.py` serves it (`app.serve`) with its own data
    folder and an empty leaderboard and no model loaded; yields its URL."""
    import app
    from rrdemo.backends.pool import ModelPool

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RRDEMO_DATA_DIR"] = str(Path(tmp) / "data")
        os.environ["LEADERBOARD_DB_URL"] = f"sqlite:///{Path(tmp) / 'leaderboard.db'}"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        demo = app.build_demo(pool=ModelPool())
        app.serve(demo, "127.0.0.1", port, prevent_thread_lock=True, quiet=True)
        try:
            yield f"http://127.0.0.1:{port}/"
        finally:
            demo.close()


def main(out: str = "assets") -> None:
    from playwright.sync_api import sync_playwright

    with fresh_app() as url:
        shoot(url, Path(out), sync_playwright)


def shoot(url: str, folder: Path, sync_playwright) -> None:
    """One screenshot per viewport of a page just opened at `url`."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for viewport, (width, height) in VIEWPORTS.items():
            page = browser.new_page(viewport={"width": width, "height": height})
            page.goto(url, wait_until="domcontentloaded")
            wait_for_decision(page)
            page.wait_for_timeout(1000)
            path = folder / shot_name(viewport)
            page.screenshot(path=str(path))  # the first screen only, as a visitor sees it
            page.close()
            print(path)
        browser.close()


if __name__ == "__main__":
    main(*sys.argv[1:])
