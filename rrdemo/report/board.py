"""A run's leaderboard submission written to a file: built and validated
(`rrdemo.report.submission`), then written whole or not at all. `rrdemo export` and a study's
build (`rrdemo.study.build`) both write through here.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path

from rrdemo.errors import RRError


def check_finished(log: Path) -> None:
    """RRError unless every unit the run planned is done: the project's own rows are seeded into
    every board, so a run still under way (whose rows would be read as final) is not exported
    with source rrdemo; `rrdemo report` shows what it has so far."""
    from rrdemo.runs.log import read_log
    from rrdemo.runs.status import log_status

    statuses = log_status(read_log(log))
    done, planned = sum(s.done for s in statuses), sum(s.planned for s in statuses)
    if done < planned:
        raise RRError(
            f"{log} is not finished ({done} of {planned} units done): rows with source rrdemo "
            "are seeded into every board, so only a finished run is exported with it; finish the "
            "run (rerun its command, merging shards first) or export it as local_run"
        )


def write_submission(
    log: Path,
    out: Path,
    submitter: str,
    notes: str = "",
    source: str = "local_run",
    created: datetime | None = None,
    *,
    provenance: str | None = None,
    superseded: str | None = None,
    paired_with: Path | None = None,
) -> Path:
    """Build, validate, then write atomically. Source rrdemo takes a finished run only, unless
    its rows are `superseded` (with the reason): the board shows those labelled and never ranks
    them, so a run stopped part-way may publish them as what it was. `paired_with`: the log of
    the run this one varies (an RRMaj-only run under another end-of-sequence policy); its rows
    pair this run's RRMaj with that run's MAJ on the same questions (`rrdemo.report.policies`)."""
    from rrdemo.report.policies import joined
    from rrdemo.report.submission_builder import build_submission
    from rrdemo.runs.log import read_log

    if source == "rrdemo" and not superseded:
        check_finished(log)
    run = log if paired_with is None else joined(read_log(paired_with), read_log(log))
    submission = build_submission(
        run,
        submitter,
        notes,
        source=source,
        created=created,
        provenance=provenance,
        superseded=superseded,
    )
    data = submission.model_dump(mode="json")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".export-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, out)
    return out
