"""Uploaded run logs, read once by their content's hash and bounded both ways (the Arena's
"Replay your own log"): a log the replay here cannot bound is refused with one sentence that
names the file as the visitor named it, never its path on the server."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from rrdemo.errors import RRError
from rrdemo.replay import RecordedUnit, check_replayable, finished_units, read_unit
from rrdemo.runs.log import RunLog, read_log
from ui.arena_chooser import result_for_log

MAX_UPLOAD_BYTES = 2 * 2**20  # what gradio takes (`app.MAX_UPLOAD`): a web sweep's log is ~100 kB


def _upload(path: str | None) -> tuple[Path, str]:
    if not path:
        raise RRError("upload a run log first (the .jsonl file `rrdemo experiment --out` writes)")
    file = Path(path)
    if file.stat().st_size > MAX_UPLOAD_BYTES:
        raise RRError(
            f"{file.name} is larger than {MAX_UPLOAD_BYTES >> 20} MiB; upload one run log"
        )
    return file, file.name


_NAME = "\0name\0"  # where a cached refusal names the file: each upload's own name goes there


def _as_uploaded(exc: RRError, file: Path) -> RRError:
    """The log reader's message about an upload, naming the file as the user named it (never its
    path on the server), and saying what to upload."""
    return RRError(
        f"{str(exc).replace(str(file), _NAME)}; upload the .jsonl run log that "
        "`rrdemo experiment --out` writes"
    )


MAX_LISTED = 2000  # finished questions an uploaded log may list (a real web sweep has at most 48)


@dataclass
class ReadLog:
    """An uploaded log as read once: the log, its choices, and (when first asked) the outcome of
    each of its conditions (`rrdemo.gallery.cell_outcomes`, a bootstrap over its questions)."""

    log: RunLog
    choices: tuple[tuple[str, str], ...]
    outcomes: dict | None = None


class UploadedLogs:
    """Uploaded run logs by their content's hash: the last `size` read, and the last `refusals`
    refused (a refused log is refused again from memory, not read again). Bounded both ways; one
    per app (`wire_replay`)."""

    def __init__(self, size: int = 4, refusals: int = 64) -> None:
        self.size, self.most_refused = size, refusals
        self.read_logs: OrderedDict[str, ReadLog] = OrderedDict()
        self.refused: OrderedDict[str, str] = OrderedDict()
        self.reads = 0  # logs parsed (the cost this cache saves: a test counts it)
        self.lock = threading.Lock()

    def read(self, path: str | None) -> tuple[ReadLog, str]:
        """The log uploaded at `path` and its name as the user named it; RRError (one sentence,
        naming the file, never its path) when it cannot be replayed here."""
        file, name = _upload(path)
        digest = hashlib.sha256(file.read_bytes()).hexdigest()
        with self.lock:
            if digest in self.refused:
                self.refused.move_to_end(digest)
                raise RRError(self.refused[digest].replace(_NAME, name))
            if digest in self.read_logs:
                self.read_logs.move_to_end(digest)
                return self.read_logs[digest], name
        try:
            self.reads += 1
            read = _read_upload(file)
        except RRError as exc:  # the reader names the file by its path: the marker replaces it
            message = str(_as_uploaded(exc, file) if str(file) in str(exc) else exc)
            self._keep(self.refused, digest, message, self.most_refused)
            raise RRError(message.replace(_NAME, name)) from None
        self._keep(self.read_logs, digest, read, self.size)
        return read, name

    def _keep(self, cache: OrderedDict, digest: str, value, most: int) -> None:
        with self.lock:
            cache[digest] = value
            while len(cache) > most:
                cache.popitem(last=False)

    def choices(self, path: str | None) -> list[tuple[str, str]]:
        """The finished questions of an uploaded log: "<label> <task> · <question>: <verdict>"."""
        return list(self.read(path)[0].choices)

    def unit(self, path: str | None, choice: str) -> tuple[ReadLog, RecordedUnit]:
        """The uploaded log, as read once, and the question picked from it."""
        read, name = self.read(path)
        if not isinstance(choice, str):
            raise RRError("pick a question of your log from the list")
        key, _, qid = choice.partition("|")
        return read, read_unit(read.log, qid, key, source=name)

    def result(self, read: ReadLog, unit: RecordedUnit) -> str:
        """The result line of a question of the log, from that log's own run (its outcomes
        computed once per log)."""
        from rrdemo.gallery import cell_outcomes

        if read.outcomes is None:
            read.outcomes = cell_outcomes(read.log)
        return result_for_log(read.log, unit, read.outcomes)


def _read_upload(file: Path) -> ReadLog:
    """Parse an uploaded log and list its finished questions, refusing (RRError, the file named by
    its path) one a replay here cannot bound: too many records, a chunk too long, or more than
    `MAX_LISTED` finished questions."""
    log = read_log(file)
    check_replayable(log, _NAME)
    units = finished_units(log)
    if len(units) > MAX_LISTED:
        raise RRError(
            f"{_NAME} has {len(units):,} finished questions; this page lists at most "
            f"{MAX_LISTED:,}: replay it with `python -m rrdemo replay`"
        )
    choices = []
    for key, qid in units:
        unit = read_unit(log, qid, key, source=_NAME, with_text=False)
        choices.append((f"{unit.setting} · {qid}: {unit.verdict()}", f"{key}|{qid}"))
    if not choices:
        raise RRError(f"{_NAME} is a run log but has no finished question yet")
    return ReadLog(log, tuple(choices))
