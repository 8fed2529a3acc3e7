"""Where rrdemo keeps its files. Read from the environment when called, never at import time."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """The app's data folder: `RRDEMO_DATA_DIR`, else `./data` (a Space mounts persistent storage at /data)."""
    path = Path(os.environ.get("RRDEMO_DATA_DIR") or "data")
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """Converted model weights and other rebuildable files: `RRDEMO_CACHE_DIR`, else `./.cache/rrdemo`."""
    path = Path(os.environ.get("RRDEMO_CACHE_DIR") or Path(".cache") / "rrdemo")
    path.mkdir(parents=True, exist_ok=True)
    return path
