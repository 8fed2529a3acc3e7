"""Where rrdemo keeps its files. Read from the environment when called, never at import time."""

from __future__ import annotations

import os
from pathlib import Path

SPACE_STORAGE = Path("/data")  # where a Space with persistent storage mounts it


def data_dir() -> Path:
    """The app's data folder: `RRDEMO_DATA_DIR`; else /data on a Space with persistent storage
    (`SPACE_ID` set and /data a writable folder); else `./data`."""
    configured = os.environ.get("RRDEMO_DATA_DIR")
    if configured:
        path = Path(configured)
    elif os.environ.get("SPACE_ID") and _writable(SPACE_STORAGE):
        path = SPACE_STORAGE / "rrdemo"
    else:
        path = Path("data")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _writable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def cache_dir() -> Path:
    """Converted model weights and other rebuildable files: `RRDEMO_CACHE_DIR`, else `./.cache/rrdemo`."""
    path = Path(os.environ.get("RRDEMO_CACHE_DIR") or Path(".cache") / "rrdemo")
    path.mkdir(parents=True, exist_ok=True)
    return path
