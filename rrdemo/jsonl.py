"""The append-only JSONL files of the project (run logs, calibration logs): one record a line,
written in one call and flushed at once, the file locked against a second writer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from rrdemo.errors import RRError


def dump_record(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def replace_log(out: Path | str, lines: list[bytes]) -> None:
    """Write a whole log at once (a merge): into `out`.merging, then renamed over `out`, so a
    reader never sees half of it and an input named as the out is read whole before it is
    replaced. Its folder is made when missing."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".merging")
    tmp.write_bytes(b"".join(lines))
    tmp.replace(out)


class LogWriter:
    """Appends records to the log, one write per line, flushed at once; locked against a second run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            import fcntl  # POSIX only; elsewhere the log is simply not locked

            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:
            pass
        except OSError:
            os.close(self._fd)
            raise RRError(
                f"{path} is being written by another run; wait for it or use another --out"
            ) from None

    def write(self, record: dict, sync: bool = False) -> None:
        os.write(self._fd, dump_record(record))
        if sync:
            os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)
