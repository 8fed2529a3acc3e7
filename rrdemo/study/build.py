"""A study's published files rebuilt from its logs, in one order: merge the shards into the log,
read the answers again with today's rules, write the report, the board rows and the gallery's
settings. Every step writes the same bytes from the same log, so rebuilding a committed study
changes nothing in a clean checkout (the tests hold every committed study to that).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from rrdemo.errors import RRError
from rrdemo.study.file import BOARD_SUBMITTER, Study


def build_steps(study: Study) -> list[str]:
    """What `build` does, one line a step (the dry run shows them)."""
    if study.kind == "pool":
        names = ", ".join(p.name if p.stem != "log" else p.parent.name for p in study.pooled)
        return [f"pool {names} at {study.settings['config']} -> {study.report}/"]
    logs = study.logs()
    shards = [p for p in logs if p != study.log]
    steps = []
    if shards:
        joined = " + ".join(p.name for p in logs)
        steps.append(f"merge {joined} -> {study.log}")
    if study.reextract:
        steps.append(f"re-extract the answers of {study.log} with today's rules (rewritten)")
    if study.report:
        steps.append(f"report -> {study.report}/")
    if study.board:
        marked = " superseded" if study.board.superseded else ""
        steps.append(f"board rows{marked} (created {study.board.created}) -> {study.board.out}")
    if study.gallery:
        steps.append(
            f"gallery settings (recorded {study.gallery.recorded}) -> {study.gallery.manifest}"
        )
    return steps


def build(study: Study, say: Callable[[str], None] = lambda line: None, png: bool = True) -> None:
    """Run every step of `build_steps` on the study's logs; RRError when there is no log yet."""
    logs = study.logs()
    if not logs:
        names = ", ".join(str(p) for p in [study.log, *study.shard_logs()])
        raise RRError(f"{study.path}: no log to build from yet ({names}); run the study first")
    if study.kind == "pool":
        _pool(study, say, png)
        return
    experiment = study.kind == "experiment"
    if len(logs) > 1 or logs[0] != study.log:
        # The merged log first: it keeps its units and order, a shard adds the units only it holds.
        if experiment:
            from rrdemo.runs.write import merge_logs

            say(f"{merge_logs(logs, study.log)} units -> {study.log}")
        else:
            from rrdemo.calibration.log import merge_calibrations

            say(f"{merge_calibrations(logs, study.log)} answers -> {study.log}")
    if study.reextract:
        _reextract(study.log, experiment)
        say(f"answers read again -> {study.log}")
    if study.report:
        if experiment:
            from rrdemo.report.write import write_report

            write_report(study.log, study.report, png=png, paired_with=study.paired_with)
            from rrdemo.study.prediction import write_prediction_check

            write_prediction_check(study)  # MAJ beside its calibration's prediction at the vote
        else:
            from rrdemo.calibration.report import write_calibration_report

            write_calibration_report(study.log, study.report, png=png)
        say(f"report -> {study.report}")
    if study.board:
        _board(study, say)
    if study.gallery:
        from rrdemo.study.gallery import write_gallery_settings

        n = write_gallery_settings(
            study.gallery.manifest, study.log, study.gallery.recorded, study.paired_with
        )
        say(f"{n} gallery settings -> {study.gallery.manifest}")


def _board(study: Study, say: Callable[[str], None]) -> None:
    """The study's board rows, naming the study file (relative to the folder that holds both it
    and the rows) as their provenance; current rows from a finished run only."""
    from rrdemo.report.board import check_finished, write_submission

    board = study.board
    assert board is not None
    if not board.superseded:
        try:
            check_finished(study.log)
        except RRError as why:  # a report of a run under way is worth having; its rows are not
            say(f"board rows not written: {why}")
            return
    root = Path(os.path.commonpath([study.path.resolve(), board.out.resolve()]))
    created = datetime.fromisoformat(board.created).replace(tzinfo=timezone.utc)
    write_submission(
        study.log,
        board.out,
        BOARD_SUBMITTER,
        board.notes,
        "rrdemo",
        created,
        provenance=study.path.resolve().relative_to(root).as_posix(),
        superseded=board.superseded,
        paired_with=study.paired_with,
    )
    say(f"board rows -> {board.out}")


def _pool(study: Study, say: Callable[[str], None], png: bool) -> None:
    """A pool's report from the logs it names (each must exist: a pool of part of them would
    publish another claim)."""
    from rrdemo.report.pool_report import write_pool_report

    missing = [str(p) for p in study.pooled if not p.is_file()]
    if missing:
        raise RRError(f"{study.path}: no log at {', '.join(missing)}; build those studies first")
    assert study.report is not None
    write_pool_report(study.pooled, study.settings["config"], study.report, png=png)
    say(f"pool -> {study.report}")


def _reextract(log: Path, experiment: bool) -> None:
    if experiment:
        from rrdemo.runs.reextract import reextract, write_records

        write_records(log, reextract(log)[1])
    else:
        from rrdemo.calibration.reextract import reextract_calibration, write_calibration_records

        write_calibration_records(log, reextract_calibration(log)[1])
