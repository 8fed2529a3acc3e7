"""Calibration: how one agent of a model answers a task, alone, with and without the injection.

Before an evidence run the model x task x prompt-style cells are measured one agent at a time (no
RR, no vote) on a seeded calibration split: the **ceiling** (accuracy without injection) and the
**obedience** (share of injected answers equal to the target). A rescue can only show where both
are high: honest agents mostly right, injected agents mostly obeying (`QUALIFY`). The evidence run
then names the calibration and uses held-out questions only (`rrdemo.runs.spec`).

    plan = plan_calibration({"models": "qwen2.5-coder-1.5b", "tasks": "logic3", "n": 20})
    run_calibration(plan, "assets/calibration/qwen15b.jsonl", ModelPool())  # calibration.runner
    cells = cell_stats(read_calibration("assets/calibration/qwen15b.jsonl"))
"""

from rrdemo.calibration.log import read_calibration, split_of
from rrdemo.calibration.plan import INJECTIONS, CalibrationPlan, Cell, plan_calibration
from rrdemo.calibration.table import QUALIFY, CellStats, cell_stats

__all__ = [
    "INJECTIONS",
    "QUALIFY",
    "CalibrationPlan",
    "Cell",
    "CellStats",
    "cell_stats",
    "plan_calibration",
    "read_calibration",
    "split_of",
]
