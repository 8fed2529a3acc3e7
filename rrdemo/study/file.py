"""A study file: the kind, settings, shards and published files of one result, read and checked.

    kind: experiment              # or calibration
    log: log.jsonl                # the merged log; shard i of n writes log-i-of-n.jsonl beside it
    shards: 2                     # processes (or machines) that run it; 1: one process
    settings: {...}               # a sweep file's settings, or `rrdemo calibrate`'s options
    publish:
      reextract: true             # answers read again with today's rules before anything is built
      report: report              # the report's folder
      paired_with: ../evidence/log.jsonl   # a run this one varies (its eos_policy, say)
      board: {out: submission.json, created: "2026-11-26T11:35:00", notes: "..."}
      gallery: {manifest: ../gallery.json, recorded: "2026-11-26"}
    throughput: {tokens_per_s: 2500, gpus: 4, note: "..."}   # a served model's decode rate: the
                                  # dry run's time and GPU hours when no --rate is given

A study of kind `pool` runs nothing: its settings name other runs' logs and one config
(`settings: {config: 3c2t, logs: [../evidence_aqua/log.jsonl, ...]}`, paths relative to its
folder, in the order the pool keeps a question: a log sharing one with a log listed before it is
shown, not pooled), and its build writes their pooled estimate and forest plot into its report
folder (`rrdemo.report.pool_report`).

Paths in the file are relative to its folder; paths inside `settings` (a sweep's calibration
logs) are as a sweep file has them, relative to where the command runs (the repository root).
A file named `study.yaml` is the study of its folder; `NAME.study.yaml` is study NAME, for a
folder that holds several (the calibrations).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from rrdemo.errors import RRError
from rrdemo.files import read_settings_file

KINDS = ("experiment", "calibration", "pool")
_KEYS = ("kind", "log", "shards", "batch", "settings", "publish", "throughput")
_PUBLISH = ("reextract", "report", "paired_with", "board", "gallery")
_BOARD = ("out", "created", "notes", "superseded")
_GALLERY = ("manifest", "recorded")
MAX_SHARDS = 64  # more processes than any machine here has cores
_SHARD_STEM = re.compile(r"-\d+-of-\d+$")  # `Study.shard_log`: <stem>-i-of-n
BOARD_SUBMITTER = "rrdemo"  # the project's own rows: source and submitter "rrdemo"


@dataclass(frozen=True)
class Board:
    """The leaderboard rows of a finished experiment (`rrdemo export --source rrdemo`)."""

    out: Path
    created: str  # when the run finished, UTC: the submission's date whatever the file time
    notes: str
    # why the rows are no longer current (the board shows them labelled, never ranked); None:
    # current rows, which only a finished run publishes
    superseded: str | None = None


@dataclass(frozen=True)
class Throughput:
    """A served model's stated decode rate: what a dry run's time and GPU hours assume."""

    tokens_per_s: float  # decoded tokens per second of the whole server at the run's load
    gpus: int = 1  # the GPUs that server holds
    note: str = ""  # where the rate comes from (measured where, or assumed)


@dataclass(frozen=True)
class GalleryPick:
    """The Arena's recorded settings of the log, picked by the gallery's rule (rrdemo.gallery)."""

    manifest: Path
    recorded: str  # the day the log was recorded, shown with each replay


@dataclass(frozen=True)
class Study:
    path: Path  # the study file
    kind: str  # "experiment" or "calibration"
    settings: dict[str, Any]
    log: Path
    shards: int = 1
    batch: int = 16  # calibration: answers decoded together
    reextract: bool = False
    report: Path | None = None
    # the log of the run this one varies (`rrdemo report --paired-with`): its RRMaj is paired
    # with that run's MAJ and RRMaj on the same questions in the report
    paired_with: Path | None = None
    board: Board | None = None
    gallery: GalleryPick | None = None
    throughput: Throughput | None = None
    pooled: tuple[Path, ...] = ()  # kind pool: the logs it pools, in order

    @property
    def name(self) -> str:
        if self.path.name == "study.yaml":
            return self.path.parent.name
        return self.path.name.removesuffix(".study.yaml")

    def shard_log(self, index: int, count: int | None = None) -> Path:
        """The log of shard `index` of `count` (default: the study's shards): `<stem>-i-of-n`."""
        count = self.shards if count is None else count
        return self.log.with_name(f"{self.log.stem}-{index}-of-{count}{self.log.suffix}")

    @staticmethod
    def is_shard_log(path: Path) -> bool:
        """Whether `path` is named as a shard's log (`shard_log`), whichever study wrote it."""
        return bool(_SHARD_STEM.search(path.stem))

    def shard_logs(self) -> list[Path]:
        return [self.shard_log(i) for i in range(1, self.shards + 1)] if self.shards > 1 else []

    def logs(self) -> list[Path]:
        """The logs that exist now, the merged log first: what a build merges, in that order
        (a pool's: the logs it reads)."""
        if self.kind == "pool":
            return [p for p in self.pooled if p.is_file()]
        return [p for p in [self.log, *self.shard_logs()] if p.is_file()]

    def published(self) -> list[Path]:
        """What a build writes: the log (merged, re-extracted), the report folder, the board
        file, the gallery manifest."""
        found = [] if self.kind == "pool" else [self.log]
        found += [self.report] if self.report else []
        found += [self.board.out] if self.board else []
        found += [self.gallery.manifest] if self.gallery else []
        return found


def _relative(value: Any, where: str, folder: Path, suffix: str = "") -> Path:
    """A path given relative to the study file's folder (a clone elsewhere finds the same file)."""
    if not isinstance(value, str) or not value.strip():
        raise RRError(f"{where} must be a path relative to the study file's folder")
    path = PurePosixPath(value)
    if path.is_absolute():
        raise RRError(f"{where}: {value!r} must be relative to the study file's folder")
    if suffix and path.suffix != suffix:
        raise RRError(f"{where}: {value!r} must be a {suffix} file")
    return folder / path


def _keys(data: Any, allowed: tuple[str, ...], where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise RRError(f"{where} must be a mapping with keys from {', '.join(allowed)}")
    unknown = [str(k) for k in data if k not in allowed]
    if unknown:
        raise RRError(f"{where}: unknown key {', '.join(unknown)} (allowed: {', '.join(allowed)})")
    return data


def _when(value: Any, where: str) -> str:
    """A date or time in UTC as ISO text; YAML reads an unquoted one as a date or datetime."""
    if isinstance(value, (date, datetime)):
        value = value.isoformat()
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        raise RRError(
            f"{where}: {value!r} is not a date; give YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (UTC)"
        ) from None
    if when.tzinfo is not None and when.utcoffset():
        raise RRError(f"{where}: {value!r} is not in UTC; give the time in UTC")
    return str(value)


def _count(value: Any, where: str, top: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise RRError(f"{where} must be a whole number from 1 to {top}, got {value!r}")
    return value


def _throughput(data: Any, where: str) -> Throughput | None:
    if data is None:
        return None
    raw = _keys(data, ("tokens_per_s", "gpus", "note"), where)
    rate = raw.get("tokens_per_s")
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate > 0:
        raise RRError(f"{where}.tokens_per_s must be a positive number of tokens/s, got {rate!r}")
    note = raw.get("note", "")
    if not isinstance(note, str):
        raise RRError(f"{where}.note must be text saying where the rate comes from")
    return Throughput(float(rate), _count(raw.get("gpus", 1), f"{where}.gpus", 4096), note)


def load_study(path: Path | str) -> Study:
    """Read and check a study file; RRError naming the first problem and what is allowed."""
    path = Path(path)
    data = _keys(read_settings_file(path, "study file"), _KEYS, f"the study file {path}")
    folder = path.parent
    kind = data.get("kind")
    if kind not in KINDS:
        raise RRError(f"{path}: kind must be one of {', '.join(KINDS)}, got {kind!r}")
    settings = data.get("settings")
    if not isinstance(settings, dict) or not settings:
        raise RRError(
            f"{path}: settings must be a mapping (a sweep file's, or calibrate's options)"
        )
    publish = _keys(data.get("publish") or {}, _PUBLISH, f"{path}: publish")
    if kind == "pool":
        return _pool(path, settings, publish)
    if kind == "calibration" and ({"board", "gallery"} & set(publish)):
        raise RRError(f"{path}: a calibration publishes a report only (no board rows, no gallery)")
    board = gallery = None
    if publish.get("board") is not None:
        raw = _keys(publish["board"], _BOARD, f"{path}: publish.board")
        if not isinstance(raw.get("notes"), str) or not raw["notes"].strip():
            raise RRError(f"{path}: publish.board.notes must say what the rows are")
        superseded = raw.get("superseded")
        if superseded is not None and (not isinstance(superseded, str) or not superseded.strip()):
            raise RRError(f"{path}: publish.board.superseded must give the reason as text")
        board = Board(
            _relative(raw.get("out"), f"{path}: publish.board.out", folder, ".json"),
            _when(raw.get("created"), f"{path}: publish.board.created"),
            raw["notes"],
            superseded,
        )
    if publish.get("gallery") is not None:
        raw = _keys(publish["gallery"], _GALLERY, f"{path}: publish.gallery")
        gallery = GalleryPick(
            _relative(raw.get("manifest"), f"{path}: publish.gallery.manifest", folder, ".json"),
            _when(raw.get("recorded"), f"{path}: publish.gallery.recorded"),
        )
    reextract = publish.get("reextract", False)
    if not isinstance(reextract, bool):
        raise RRError(f"{path}: publish.reextract must be true or false, got {reextract!r}")
    report = publish.get("report")
    paired = publish.get("paired_with")
    if paired is not None and (kind != "experiment" or not report):
        raise RRError(f"{path}: publish.paired_with needs an experiment with a report")
    return Study(
        path=path,
        kind=kind,
        settings=dict(settings),
        log=_relative(data.get("log"), f"{path}: log", folder, ".jsonl"),
        shards=_count(data.get("shards", 1), f"{path}: shards", MAX_SHARDS),
        batch=_count(data.get("batch", 16), f"{path}: batch", 1024),
        reextract=reextract,
        report=_relative(report, f"{path}: publish.report", folder) if report else None,
        paired_with=(
            _relative(paired, f"{path}: publish.paired_with", folder, ".jsonl") if paired else None
        ),
        board=board,
        gallery=gallery,
        throughput=_throughput(data.get("throughput"), f"{path}: throughput"),
    )


def _pool(path: Path, settings: dict[str, Any], publish: dict[str, Any]) -> Study:
    """A study of kind pool: its config, the logs it reads, its report folder."""
    _keys(settings, ("config", "logs"), f"{path}: settings")
    config, logs = settings.get("config"), settings.get("logs")
    if not isinstance(config, str) or not re.fullmatch(r"\d+c\d+t", config):
        raise RRError(f"{path}: settings.config must be a config like 3c2t, got {config!r}")
    if not isinstance(logs, list) or len(logs) < 2:
        raise RRError(f"{path}: settings.logs must list at least two run logs to pool")
    if set(publish) != {"report"}:
        raise RRError(f"{path}: a pool publishes a report only (publish: {{report: FOLDER}})")
    paths = tuple(
        _relative(p, f"{path}: settings.logs[{i}]", path.parent, ".jsonl")
        for i, p in enumerate(logs)
    )
    report = _relative(publish["report"], f"{path}: publish.report", path.parent)
    return Study(path, "pool", dict(settings), report / "pooled.csv", report=report, pooled=paths)


def find_studies(root: Path | str) -> list[Path]:
    """Every study file under `root` (`study.yaml` and `NAME.study.yaml`), sorted."""
    root = Path(root)
    return sorted({*root.rglob("study.yaml"), *root.rglob("*.study.yaml")})
