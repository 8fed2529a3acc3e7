"""Every committed study rebuilds its published files from its committed logs, byte for byte,
and plans today what its log's header records: the study files are the committed results'
single source, so `rrdemo study FILE build` in a clean clone leaves git status clean."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rrdemo.calibration.log import header_for as calibration_header
from rrdemo.calibration.log import read_calibration_header
from rrdemo.calibration.plan import plan_calibration
from rrdemo.study.build import build
from rrdemo.study.file import find_studies, load_study

ROOT = Path(__file__).resolve().parents[3]
STUDIES = find_studies(ROOT / "assets")
IDS = [str(path.relative_to(ROOT / "assets")) for path in STUDIES]


def test_every_committed_result_with_a_log_has_a_study() -> None:
    studied = {load_study(path).log for path in STUDIES}
    assert {ROOT / "assets" / name for name in (
        "evidence/log.jsonl", "evidence_aqua/log.jsonl", "meter05b/log.jsonl",
        "qwen15b/log.jsonl", "experiment_small.jsonl", "experiment_small_shuffled.jsonl",
        "calibration/qwen15b.jsonl", "calibration/qwen05b.jsonl",
        "calibration/qwen15b_arith.jsonl", "calibration/qwen15b_styles.jsonl",
    )} <= studied  # fmt: skip


def _committed(path: Path):
    study = load_study(path)
    missing = [p for p in study.published() if not p.exists()]
    if missing:
        pytest.skip(f"{path.name}: not published yet ({', '.join(p.name for p in missing)})")
    return study


@pytest.mark.parametrize(
    "path", [p for p in STUDIES if "calibration" in p.parts], ids=lambda p: p.name
)
def test_a_calibration_study_plans_what_its_log_records(path) -> None:
    study = _committed(path)
    header = read_calibration_header(study.log)
    assert calibration_header(plan_calibration(study.settings)) == header


def _files(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {path.name: path.read_bytes()}
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


@pytest.mark.slow
@pytest.mark.parametrize("path", STUDIES, ids=IDS)
def test_a_committed_study_rebuilds_its_published_files_byte_for_byte(path, tmp_path) -> None:
    study = _committed(path)
    copy_root = tmp_path / "repo"
    paired = [study.paired_with.resolve()] if study.paired_with else []  # read, not rebuilt
    for item in {study.path, *study.logs(), *study.published(), *paired}:
        target = copy_root / item.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if item.is_dir() else shutil.copy2)(item, target)
    copy = load_study(copy_root / path.relative_to(ROOT))
    build(copy)
    for before, after in zip(study.published(), copy.published(), strict=True):
        committed, rebuilt = _files(before), _files(after)
        drawn = rebuilt.get("figures.txt", b"")
        if b"no PNG" in drawn:  # no headless browser here: the PNGs stay, the note says why
            committed = {k: v for k, v in committed.items() if k != "figures.txt"}
            rebuilt = {k: v for k, v in rebuilt.items() if k != "figures.txt"}
        assert sorted(rebuilt) == sorted(committed), before
        changed = [name for name in committed if rebuilt[name] != committed[name]]
        assert not changed, f"{before}: {changed} differ from the committed files"
