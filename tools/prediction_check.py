"""MAJ predicted at the vote beside MAJ as each committed evidence run decided it (docs/evidence.md,
"Selection rule 3"): each run against the calibration that chose it and the styles calibration.

    python -m tools.prediction_check        # prints the Markdown table
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAL = ROOT / "assets" / "calibration"
STYLES = CAL / "qwen15b_styles.jsonl"
# (name, evidence log, the calibration that chose it)
RUNS = (
    ("AQuA direct moderate", "evidence_aqua", "qwen15b.jsonl"),
    ("arith2 direct moderate", "evidence", "qwen15b_arith.jsonl"),
)
PASS = ("arith2 direct moderate `pass` (its questions; MAJ of the paired run)", "evidence_pass")


def table() -> str:
    from rrdemo.calibration.check import check_markdown, prediction_check
    from rrdemo.calibration.log import read_calibration
    from rrdemo.runs.log import read_log

    styles = read_calibration(STYLES)
    rows = []
    for name, folder, chose in RUNS:
        run = read_log(ROOT / "assets" / folder / "log.jsonl")
        for cal in (read_calibration(CAL / chose), styles):
            rows += [(name, cal.path.stem, r) for r in prediction_check(cal, run)]
    name, folder = PASS
    qids = {
        u["question_id"] for u in read_log(ROOT / "assets" / folder / "log.jsonl").finished_units()
    }
    paired = read_log(ROOT / "assets" / RUNS[1][1] / "log.jsonl")
    for cal in (read_calibration(CAL / RUNS[1][2]), styles):
        checked = prediction_check(cal, paired, qids)
        rows += [(name, cal.path.stem, r) for r in checked if r.config == "3c2t"]
    return check_markdown(rows)


if __name__ == "__main__":
    print(table())
