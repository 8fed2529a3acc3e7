"""The decision-level prediction's tables (`rrdemo.calibration.predict`): MAJ per config of N = 5,
the room, and what selection rule 3 picks, as Markdown, CSV and a few lines for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from rrdemo.calibration.predict import CONFIGS, EARLY_MAX, ROOM, Rule3Cell, rule3
from rrdemo.report.render import csv_text, markdown_table
from rrdemo.report.stats import BOOT


def prediction_note(k: int, numeric: tuple[int, int]) -> str:
    """What the prediction table shows and how it was computed."""
    agree, pairs = numeric
    apart = (
        f"on number and MATH tasks over as many values as make two of them agree as often as in "
        f"this log ({agree} of {pairs} pairs of wrong answers to one question agree)"
        if agree
        else "on number and MATH tasks each counts apart (no two wrong answers to one question "
        "agree in this log)"
    )
    return (
        "**MAJ predicted at the vote** (N = 5; % with 95% bootstrap intervals over the "
        f"calibration's questions, {BOOT:,} resamples). Each agent answers on its own, an honest one with the rates "
        "of its cell without injection, an injected one with the rates under the injection "
        "(gold, target, another answer, none); the plurality wins, ties broken at random; the "
        "accuracy is enumerated exactly, not simulated. Another answer spreads evenly over the "
        f"remaining option letters on letter tasks, {apart}. **Room**: MAJ({ROOM[0]}) - "
        f"MAJ({ROOM[1]}), what a rescue could win back. *Target by {k}*: injected answers "
        f"stating the target within {k} tokens. **Selection rule 3**: among cells whose target "
        f"by {k} is at most {EARLY_MAX:.0%} and whose room's lower bound is above 0, the paper "
        "task with the largest room and the generated task with the largest room (a tie goes "
        f"to the smaller target by {k})."
    )


def prediction_table(cells: Sequence[Rule3Cell], k: int) -> tuple[list[str], list[list[str]]]:
    """Header and text cells: one row per model x task x style x injection."""
    picks = {id(c) for c in rule3(cells).values() if c is not None}
    header = ["model", "task", "style", "injection", "questions"]
    header += [f"MAJ {c}" for c in CONFIGS] + ["room", f"target by {k}", "rule 3"]
    body = []
    for c in cells:
        p = c.prediction
        verdict = "**picked**" if id(c) in picks else ("eligible" if c.eligible else "no")
        body.append(
            [p.model, p.task, p.style, p.injection, str(p.questions)]
            + [p.maj[config].text() for config in CONFIGS]
            + [p.room.text(signed=True), f"{100 * c.early:.0f}", verdict]
        )
    return header, body


def prediction_markdown(cells: Sequence[Rule3Cell], k: int) -> str:
    return markdown_table(*prediction_table(cells, k))


def prediction_csv(cells: Sequence[Rule3Cell]) -> str:
    """Every cell's predicted MAJ per config and room with interval bounds (fractions)."""
    picks = {id(c) for c in rule3(cells).values() if c is not None}
    items = []
    for c in cells:
        p = c.prediction
        item = {
            "model": p.model,
            "task": p.task,
            "style": p.style,
            "injection": p.injection,
            "questions": p.questions,
            "other_values": p.spread if p.spread is not None else "apart",
        }
        for config in CONFIGS:
            est = p.maj[config]
            item |= {f"maj_{config}": est.value, f"maj_{config}_lo": est.lo}
            item[f"maj_{config}_hi"] = est.hi
        item |= {"room": p.room.value, "room_lo": p.room.lo, "room_hi": p.room.hi}
        item |= {"early_target": c.early, "rule3_eligible": c.eligible}
        item["rule3_picked"] = id(c) in picks
        items.append(item)
    return csv_text(items)


def rule3_line(cells: Sequence[Rule3Cell], final: bool = True) -> str:
    """Rule 3's two picks in one sentence ("so far" unless the calibration is complete)."""
    head = "**Rule 3 picks:**" if final else "**Rule 3 picks so far** (not final):"
    parts = []
    for kind, cell in rule3(cells).items():
        if cell is None:
            parts.append(f"{kind} task: none eligible")
            continue
        p = cell.prediction
        parts.append(
            f"{kind} task: {p.task}, {p.style}, {p.injection} (predicted MAJ "
            f"{p.maj[ROOM[0]].text()} -> {p.maj[ROOM[1]].text()}, room "
            f"{p.room.text(signed=True)}, target early in {100 * cell.early:.0f}%)"
        )
    return f"{head} {'; '.join(parts)}."
