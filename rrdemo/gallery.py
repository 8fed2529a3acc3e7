"""The gallery of recorded runs: which logged questions the Arena replays, read from a manifest.

The manifest (`assets/gallery.json`, or the file env RRDEMO_GALLERY names) is data only: its rule
for picking questions, when each log was recorded, and per *setting* (a condition such as
`moderate 3c2t · AQuA`) the log, the condition and the question ids it shows, and optionally a
`shelf`: why an older recording is kept aside (the Arena lists those behind a disclosure, labelled),
and for a run that varies another (RRMaj alone under another end-of-sequence policy) `paired_with`,
the log of the run it varies: its MAJ is that run's on the same question (rrdemo.report.policies).
Pointing the Arena at another sweep means editing that file. Beside each setting the Arena shows
what its whole run measured (`CellOutcome`: the paired difference of rrdemo.report.paired), so
a setting is named by what it is and what its run found, never by what it was meant to show. The rule is one for all: the first k finished questions of the
condition in the sweep's order (`first_questions`), so nothing is picked for its outcome; the tests hold
the manifest to it. Log paths in the manifest are relative to the manifest's folder.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rrdemo.config import RunConfig
from rrdemo.errors import RRError
from rrdemo.replay import RecordedUnit, finished_units, read_unit
from rrdemo.report.paired import PairedRow, paired_by_condition
from rrdemo.report.policies import joined, other_outcomes
from rrdemo.report.render import pct
from rrdemo.runs.log import RunLog, read_log
from rrdemo.tasks import get_task

DEFAULT_MANIFEST = Path(__file__).resolve().parents[1] / "assets" / "gallery.json"
_SETTING_FIELDS = ("name", "description", "log", "condition", "questions")
# Below this many paired questions a run gets no verdict: one question moves RRMaj - MAJ by 5
# points or more, and a bootstrap over a handful of questions spans most of [-100, +100].
MIN_VERDICT_QUESTIONS = 20
TOO_FEW = "too few questions for a verdict"


@dataclass(frozen=True)
class CellOutcome:
    """A condition's whole run, MAJ against RRMaj on the same questions (a `PairedRow`), and what
    it shows: a difference counts only when its 95% interval excludes 0."""

    row: PairedRow
    corrupted: int  # c of the condition
    agents: int  # N

    @property
    def finding(self) -> str:
        """The run in words: "rescue" only where the corrupted agents are a majority beside
        honest ones and RRMaj's lead over MAJ has an interval above 0; "no rescue" there
        otherwise; elsewhere RRMaj ahead / behind / no difference shown; below
        `MIN_VERDICT_QUESTIONS` questions, none of these."""
        r, trap = self.row, self.agents / 2 < self.corrupted < self.agents
        if r.questions < MIN_VERDICT_QUESTIONS:
            return TOO_FEW
        if r.delta_lo > 0:
            return "rescue" if trap else "RRMaj ahead"
        if r.delta_hi < 0:
            return "RRMaj behind"
        return "no rescue" if trap else "no difference shown"

    def difference(self) -> str:
        """RRMaj - MAJ in points with its 95% interval, as the report writes it."""
        r = self.row
        return f"{pct(r.delta, True)} [{pct(r.delta_lo, True)}, {pct(r.delta_hi, True)}]"

    def short(self) -> str:
        """The finding and the difference; below the minimum, the question count instead."""
        if self.finding == TOO_FEW:
            return f"{self.row.questions} questions, {TOO_FEW}"
        return f"{self.finding}, {self.difference()}"

    def counts(self) -> str:
        """Where the questions fall: who alone was right, both, neither."""
        r = self.row
        return (
            f"RRMaj alone right on {r.rrmaj_only} of {r.questions}, MAJ alone on {r.maj_only}, "
            f"both right on {r.both_right}, both wrong on {r.both_wrong}"
        )


def cell_outcomes(log: RunLog, base: RunLog | None = None) -> dict[str, CellOutcome]:
    """The paired result of each condition over the log's finished questions, by condition key
    (a condition without a finished question has none); for a run that varies `base`, its RRMaj
    against the base run's MAJ on the same questions (`rrdemo.report.policies.other_outcomes`)."""
    outcomes = {}
    rows = paired_by_condition(log) if base is None else other_outcomes(base, log)
    for key, row in rows.items():
        config = RunConfig.from_dict(log.conditions[key]["config"])
        outcomes[key] = CellOutcome(row, config.c, config.n)
    return outcomes


def cached_outcomes(path: Path, base: Path | None = None) -> dict[str, CellOutcome]:
    """`cell_outcomes` of a log file (paired with the `base` run it varies, when given),
    computed once per version of the files."""
    return _outcomes(_version(path), _version(base) if base is not None else None)


def _version(path: Path) -> tuple[Path, int, int]:
    stat = path.stat()
    return path, stat.st_mtime_ns, stat.st_size


CELLS = {
    (True, True): "both right",
    (False, True): "RRMaj alone right",
    (True, False): "MAJ alone right",
    (False, False): "both wrong",
}


def question_cell(unit: RecordedUnit) -> str:
    """Which of the four cells of its run a recorded question falls in ("RRMaj alone right")."""
    votes = unit.done.get("votes", {})
    return CELLS[
        bool(votes.get("MAJ", {}).get("correct")), bool(votes.get("RRMaj", {}).get("correct"))
    ]


@dataclass(frozen=True)
class GallerySetting:
    """One setting of the gallery (also an Arena preset): a condition of a log and its questions."""

    name: str  # the condition in the paper's words, e.g. "moderate 3c2t" (model and task: `group`)
    description: str  # what the setting shows, one or two sentences
    log: Path
    source: str  # the log as shown to people, e.g. "assets/experiment_small_shuffled.jsonl"
    recorded: str  # when the log was written
    condition: str  # the condition key in the log's header
    questions: tuple[str, ...]
    shelf: str = ""  # "" for a current run; else why it is kept aside, e.g. "old prompt"
    paired_with: Path | None = None  # the log of the run this one varies (its MAJ is that run's)

    def run_log(self) -> RunLog:
        """The log the setting plays: its own, or joined with the run it varies."""
        if self.paired_with is None:
            return cached_log(self.log)
        return _joined(_version(self.paired_with), _version(self.log))

    def unit(self, question_id: str) -> RecordedUnit:
        return read_unit(
            self.run_log(), question_id, self.condition, source=self.source,
            recorded=self.recorded,
        )  # fmt: skip

    @property
    def group(self) -> str:
        """The model and task the setting ran, e.g. "qwen2.5-coder-1.5b · AQuA" (the chooser's
        groups), with why it is kept aside for a shelved recording ("... (old prompt)")."""
        cond = cached_log(self.log).conditions.get(self.condition, {})
        group = f"{cond.get('ensemble', '?')} · {_task_title(str(cond.get('task', '?')))}"
        return f"{group} ({self.shelf})" if self.shelf else group

    def outcome(self) -> CellOutcome | None:
        """What the setting's whole run measured; None while no question of it is finished."""
        return cached_outcomes(self.log, self.paired_with).get(self.condition)

    @property
    def title(self) -> str:
        """The setting with its model and task: "moderate 3c2t · AQuA · qwen2.5-coder-1.5b"."""
        return f"{self.name} · {self.group}"

    def label(self, grouped: bool = False) -> str:
        """The setting's title with its run's outcome ("moderate 3c2t · AQuA · ...: no rescue,
        +6.2 [+0.0, +13.8]"); `grouped`: without the model and task (the chooser says them)."""
        outcome = self.outcome()
        named = self.name if grouped else self.title
        return f"{named}: {outcome.short()}" if outcome is not None else named


@dataclass(frozen=True)
class Gallery:
    rule: str  # how the questions were picked, said in the UI
    settings: tuple[GallerySetting, ...]

    def entries(self) -> list[tuple[int, str]]:
        """(setting index, question id) of every recorded run, setting by setting."""
        return [(i, q) for i, s in enumerate(self.settings) for q in s.questions]

    def groups(self, shelved: bool = False) -> dict[str, list[int]]:
        """Setting indices by model and task, in the manifest's order: the current runs, or
        (`shelved`) the recordings kept aside."""
        grouped: dict[str, list[int]] = {}
        for i, setting in enumerate(self.settings):
            if bool(setting.shelf) == shelved:
                grouped.setdefault(setting.group, []).append(i)
        return grouped


def _task_title(task: str) -> str:
    """The task's title ("AQuA"); its name when this build does not know the task."""
    try:
        return get_task(task).title
    except RRError:
        return task


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
                shelf=str(raw.get("shelf") or ""),
                paired_with=path.parent / raw["paired_with"] if raw.get("paired_with") else None,
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


@lru_cache(maxsize=8)
def _outcomes(
    log: tuple[Path, int, int], base: tuple[Path, int, int] | None
) -> dict[str, CellOutcome]:
    return cell_outcomes(_parsed(*log), _parsed(*base) if base is not None else None)


@lru_cache(maxsize=4)
def _joined(base: tuple[Path, int, int], other: tuple[Path, int, int]) -> RunLog:
    return joined(_parsed(*base), _parsed(*other))
