"""Write `module_seconds.json` (each test module's seconds) from junit reports of a full run.

    python -m tests.support.module_seconds REPORT.xml [REPORT.xml ...]

The shards (`tests/support/shards.py`) weigh modules by it; rerun it after the suite's cost
moves (the file says when and where it was measured only through git).
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.support.shards import SECONDS_FILE

ROOT = Path(__file__).resolve().parents[2]


def module_path(classname: str) -> str | None:
    """ "tests.ui.test_x" or "tests.ui.test_x.TestY" -> "tests/ui/test_x.py" (None if absent)."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end]) + ".py"
        if (ROOT / path).exists():
            return path
    return None


def seconds_per_module(reports: list[Path]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for report in reports:
        for case in ET.parse(report).iter("testcase"):
            module = module_path(case.get("classname", ""))
            if module is not None:
                totals[module] = totals.get(module, 0.0) + float(case.get("time", 0))
    return {module: round(seconds, 1) for module, seconds in sorted(totals.items())}


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m tests.support.module_seconds REPORT.xml [REPORT.xml ...]")
    SECONDS_FILE.write_text(
        json.dumps(seconds_per_module([Path(p) for p in sys.argv[1:]]), indent=1) + "\n"
    )
    print(f"wrote {SECONDS_FILE}")
