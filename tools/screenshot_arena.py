"""Retake assets/screenshot_arena.png: the Arena's first preset, run to the end, in headless chromium.

RRDEMO_CACHE_DIR=... HF_HUB_OFFLINE=1 .venv/bin/python -m tools.screenshot_arena [OUT.png]
"""

from __future__ import annotations

import shutil
import socket
import sys

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]


def main(out: str = "assets/screenshot_arena.png") -> None:
    from playwright.sync_api import sync_playwright

    import app
    from rrdemo.backends.pool import ModelPool

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo = app.build_demo(pool=ModelPool())
    demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{port}/", wait_until="domcontentloaded")
            page.locator("#rr-run").wait_for(timeout=60_000)
            page.locator("#rr-preset-0").click()
            page.get_by_text("Done ·").first.wait_for(timeout=900_000)
            page.wait_for_timeout(1000)
            page.screenshot(path=out, full_page=True)
            browser.close()
    finally:
        demo.close()
    print(out)


if __name__ == "__main__":
    main(*sys.argv[1:])
