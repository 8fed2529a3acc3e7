"""A study's MAJ beside what its calibration predicted at the vote (`rrdemo.calibration.check`):
report/prediction_check.md, for an experiment study whose settings name its calibration."""

from __future__ import annotations

from pathlib import Path

from rrdemo.study.file import Study

NAME = "prediction_check.md"


def _calibration_path(study: Study, name: str) -> Path | None:
    """A calibration log as the sweep names it (relative to where the command runs), else found
    from the study's folder upwards; None when it is in neither place."""
    given = Path(name)
    for base in (Path.cwd(), *study.path.resolve().parents):
        if (base / given).is_file():
            return base / given
    return None


def write_prediction_check(study: Study) -> Path | None:
    """Write the table into the study's report folder; None (nothing written) when the study names
    no calibration, has no report, or a calibration log cannot be found."""
    from rrdemo.calibration.check import check_markdown, prediction_check
    from rrdemo.calibration.log import read_calibration
    from rrdemo.runs.log import read_log

    names = study.settings.get("calibration") or []
    paths = [_calibration_path(study, n) for n in names]
    if not names or study.report is None or None in paths:
        return None
    run, only = read_log(study.log), None
    where = f"`{study.log.name}`"
    configs = {c["label"] for c in run.conditions.values()}
    if study.paired_with is not None:  # MAJ was decided by the paired run, on this run's questions
        only = {u["question_id"] for u in run.finished_units()}
        run = read_log(study.paired_with)
        where = f"the paired run's `{study.paired_with.name}`, on this run's {len(only)} questions"
    rows = []
    for path in paths:
        checked = prediction_check(read_calibration(path), run, only)
        rows += [(study.name, path.stem, r) for r in checked if r.config in configs]
    lines = [
        "# MAJ predicted at the vote beside MAJ as the run decided it",
        "",
        f"Predicted from the calibration that chose the run ({', '.join(names)}): five independent "
        "agents with the calibration cell's per-answer rates, exact plurality, 95% bootstrap "
        "interval over the calibration's questions (`rrdemo.calibration.predict`). Observed: "
        f"MAJ's own decisions in {where}, 95% Wilson interval over questions.",
        "",
        check_markdown(rows) if rows else "No MAJ decision in the log yet.",
        "",
    ]
    out = study.report / NAME
    out.write_text("\n".join(lines), encoding="utf-8")
    return out
