"""The Arena's first screen: seconds from opening the page to the opening recording's first
decision, in real chromium, at a laptop's and a phone's viewport (target: under 10 s on a free
CPU Space). Measured, never asserted.

    python -m bench.first_screen [--loads 3]

Serves the app as `python app.py` does (no model loaded), opens a fresh page `--loads` times per
viewport and writes bench/first_screen.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from tools.screenshot_arena import ARGS, CHROMIUM, VIEWPORTS

HERE = Path(__file__).resolve().parent
FIRST_DECISION = (
    "() => [...document.querySelectorAll('#rr-verdict .rr-verdict')]"
    ".some(el => /correct|fooled|wrong|no answer/.test(el.innerText))"
)


def measure(url: str, loads: int) -> dict:
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for name, (width, height) in VIEWPORTS.items():
            seconds = []
            for _ in range(loads):
                page = browser.new_page(viewport={"width": width, "height": height})
                start = time.monotonic()
                page.goto(url, wait_until="domcontentloaded")
                page.wait_for_function(FIRST_DECISION, timeout=120_000)
                seconds.append(round(time.monotonic() - start, 2))
                page.close()
            results[name] = {"seconds": seconds, "median": statistics.median(seconds)}
        browser.close()
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=3)
    args = parser.parse_args(argv)
    from tools.screenshot_arena import fresh_app

    with fresh_app() as url:
        results = measure(url, args.loads)
    out = {
        "what": "page open to the opening recording's first decision, s",
        "cores": os.cpu_count(),
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "viewports": results,
    }
    (HERE / "first_screen.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
