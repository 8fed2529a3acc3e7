"""MAJ predicted at the vote (`rrdemo.calibration.predict`) beside MAJ as an evidence run decided it.

Observed is the run's own decisions: each question's MAJ vote as it was cast (the estimator the
paired table and McNemar's test use), with a 95% Wilson interval over questions. Pure functions.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from rrdemo.calibration.log import CalibrationLog
from rrdemo.calibration.predict import Interval, Prediction, predictions
from rrdemo.report.render import markdown_table
from rrdemo.report.stats import wilson95
from rrdemo.runs.log import RunLog


@dataclass(frozen=True)
class CheckRow:
    task: str
    style: str
    injection: str
    config: str
    predicted: Interval | None  # None: the calibration has no such cell
    calibration_questions: int
    questions: int  # questions the run finished under this config
    right: int  # of them, MAJ right

    @property
    def observed(self) -> Interval:
        lo, hi = wilson95(self.right, self.questions)
        return Interval(self.right / self.questions, lo, hi)

    @property
    def inside(self) -> bool | None:
        """Whether the prediction lies within the observed interval."""
        if self.predicted is None:
            return None
        return self.observed.lo <= self.predicted.value <= self.observed.hi

    @property
    def overlap(self) -> bool | None:
        """Whether the predicted and the observed intervals share a value."""
        if self.predicted is None:
            return None
        return self.predicted.lo <= self.observed.hi and self.observed.lo <= self.predicted.hi


def observed_maj(log: RunLog, only: Collection[str] | None = None) -> dict[tuple, tuple[int, int]]:
    """(model, task, style, strength, config) -> (questions, MAJ right) over the run's finished
    units (`only` these question ids, when given)."""
    out: dict[tuple, list[int]] = {}
    for record in log.finished_units():
        vote = record.get("votes", {}).get("MAJ")
        cond = log.conditions[record["condition"]]
        if vote is None or (only is not None and record["question_id"] not in only):
            continue
        models = {a["model"] for a in cond["config"]["agents"]}
        style = cond["config"].get("prompt_style", "direct")
        key = (",".join(sorted(models)), cond["task"], style, cond["strength"], cond["label"])
        tally = out.setdefault(key, [0, 0])
        tally[0] += 1
        tally[1] += bool(vote.get("correct"))
    return {k: (n, right) for k, (n, right) in out.items()}


def prediction_check(
    calibration: CalibrationLog, run: RunLog, only: Collection[str] | None = None
) -> list[CheckRow]:
    """One row per (cell, config) the run measured MAJ in, its prediction from `calibration`."""
    predicted: dict[tuple, Prediction] = {p.key: p for p in predictions(calibration)}
    rows = []
    for (model, task, style, strength, config), (n, right) in observed_maj(run, only).items():
        p = predicted.get((model, task, style, strength))
        rows.append(
            CheckRow(
                task, style, strength, config, p.maj.get(config) if p else None,
                p.questions if p else 0, n, right,
            )
        )  # fmt: skip
    order = {c: i for i, c in enumerate(("0c5t", "1c4t", "2c3t", "3c2t", "4c1t", "5c0t"))}
    return sorted(rows, key=lambda r: (r.task, r.style, r.injection, order.get(r.config, 9)))


def check_markdown(rows: Sequence[tuple[str, str, CheckRow]]) -> str:
    """(evidence run, calibration, row) triples as one Markdown table (%, 95% intervals)."""
    header = ["evidence run", "config", "calibration (questions)", "predicted MAJ"]
    header += ["observed MAJ (run's decisions)", "questions", "predicted value inside observed"]
    header += ["intervals overlap"]
    word = {True: "yes", False: "**no**", None: "–"}
    body = []
    for run, calibration, r in rows:
        body.append(
            [
                run, r.config, f"{calibration} ({r.calibration_questions})",
                r.predicted.text() if r.predicted else "–", r.observed.text(), str(r.questions),
                word[r.inside], word[r.overlap],
            ]
        )  # fmt: skip
    return markdown_table(header, body)
