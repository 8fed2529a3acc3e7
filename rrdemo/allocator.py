"""How many malloc arenas a long-lived server keeps (glibc).

glibc gives threads their own heap arenas, up to eight per core, and keeps what each arena freed
for later use. A web app answers its visitors from a pool of worker threads, so its resident
memory creeps up as more arenas fill: measured on the app (`bench/load_memory.py`, 11 rounds of a
full queue), 121 MB of growth from round 2 to round 11 with glibc's default, 5 MB with two arenas
(docs/security.md). `limit_arenas` sets that limit for the arenas created from then on.
"""

from __future__ import annotations

import ctypes
import os
import sys

ENV = "RRDEMO_MALLOC_ARENAS"
DEFAULT_ARENAS = 2
_M_ARENA_MAX = -8  # glibc's mallopt parameter


def limit_arenas(count: int | None = None) -> bool:
    """Keep at most `count` arenas (default: `RRDEMO_MALLOC_ARENAS`, else 2). Leaves glibc's own
    `MALLOC_ARENA_MAX` alone when it is set; returns whether a limit was set here (False off
    glibc)."""
    if os.environ.get("MALLOC_ARENA_MAX") or not sys.platform.startswith("linux"):
        return False
    if count is None:
        text = os.environ.get(ENV, "").strip()
        count = int(text) if text.isdigit() and int(text) > 0 else DEFAULT_ARENAS
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # not glibc (musl has no mallopt arenas)
        return False
    return mallopt(_M_ARENA_MAX, count) == 1
