"""The gallery of recorded runs: which logged questions the Arena replays, read from a manifest.

The manifest (`assets/gallery.json`, or the file env RRDEMO_GALLERY names) is data only: its rule
for picking questions, when each log was recorded, and per *setting* (trap and rescue, ceiling,
floor, ...) the log, the condition and the question ids it shows. Pointing the Arena at another
sweep means editing that file. The rule is one for all: the first k finished questions of the
condition in the sweep's order (`first_questions`), so nothing is picked for its outcome; the tests hold
the manifest to it. Log paths in the manifest are relative to the manifest's folder.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rrdemo.errors import RRError
from rrdemo.replay import RecordedUnit, finished_units, read_unit
from rrdemo.runs.log import RunLog, read_log

DEFAULT_MANIFEST = Path(__file__).resolve().parents[1] / "assets" / "gallery.json"
_SETTING_FIELDS = ("name", "description", "log", "condition", "questions")


@dataclass(frozen=True)
class GallerySetting:
    """One setting of the gallery (also an Arena preset): a condition of a log and its questions."""

    name: str  # e.g. "Trap and rescue · strong 3c2t · Logic3"
    description: str  # what the setting shows, one or two sentences
    log: Path
    source: str  # the log as shown to people, e.g. "assets/experiment_small_shuffled.jsonl"
    recorded: str  # when the log was written
    condition: str  # the condition key in the log's header
    questions: tuple[str, ...]

    def unit(self, question_id: str) -> RecordedUnit:
        return read_unit(
            cached_log(self.log), question_id, self.condition, source=self.source,
            recorded=self.recorded,
        )  # fmt: skip


@dataclass(frozen=True)
class Gallery:
    rule: str  # how the questions were picked, said in the UI
    settings: tuple[GallerySetting, ...]

    def entries(self) -> list[tuple[int, str]]:
        """(setting index, question id) of every recorded run, setting by setting."""
        return [(i, q) for i, s in enumerate(self.settings) for q in s.questions]


def manifest_path() -> Path:
    """RRDEMO_GALLERY when set (read when called), else the manifest shipped in assets/."""
    return Path(os.environ.get("RRDEMO_GALLERY") or DEFAULT_MANIFEST)


def load_gallery(path: Path | str | None = None) -> Gallery:
    """The manifest, checked: every setting names its log, condition and questions."""
    path = Path(path) if path is not None else manifest_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RRError(f"the gallery manifest {path.name} cannot be read: {exc}") from None
    logs = data.get("logs") or {}
    settings = []
    for number, raw in enumerate(data.get("settings") or [], start=1):
        missing = [f for f in _SETTING_FIELDS if not raw.get(f)]
        if missing or raw["log"] not in logs:
            what = ", ".join(missing) or f"an entry under logs for {raw['log']!r}"
            raise RRError(f"gallery setting {number} in {path.name} lacks {what}")
        settings.append(
            GallerySetting(
                name=raw["name"],
                description=raw["description"],
                log=path.parent / raw["log"],
                source=f"{path.parent.name}/{raw['log']}",
                recorded=str(logs[raw["log"]].get("recorded", "")),
                condition=raw["condition"],
                questions=tuple(raw["questions"]),
            )
        )
    if not settings:
        raise RRError(f"the gallery manifest {path.name} lists no settings")
    return Gallery(str(data.get("rule", "")), tuple(settings))


def first_questions(log: RunLog, condition: str, k: int) -> list[str]:
    """The gallery's rule: the first k finished questions of `condition` in the order the sweep
    runs them (its question list in the log's header), whatever their outcome. Unlike the order
    of the log's lines, this order survives merging shards and resuming."""
    done = {qid for key, qid in finished_units(log) if key == condition}
    planned = log.conditions[condition]["questions"] if condition in log.conditions else []
    return [qid for qid in planned if qid in done][:k]


def cached_log(path: Path) -> RunLog:
    """A log parsed once per version of the file (a sweep still running keeps growing it)."""
    stat = path.stat()
    return _parsed(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=8)
def _parsed(path: Path, mtime_ns: int, size: int) -> RunLog:
    return read_log(path)
