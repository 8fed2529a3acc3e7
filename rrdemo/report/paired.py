"""MAJ against RRMaj on the same questions, as the run decided them (M = M*, no pool draws).

Per condition: both methods' accuracy, the paired difference RRMaj - MAJ with a bootstrap 95%
interval over questions, and McNemar's exact test on the questions where exactly one method was
right (b: MAJ right only, c: RRMaj right only; two-sided binomial p of min(b, c) in b + c at 1/2).
Per method, what each single answer or trajectory was: right, fooled (the target), other or no
answer. Pure functions over a parsed log.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rrdemo.report.render import csv_text, markdown_table, pct
from rrdemo.report.stats import BOOT, interval95, resample
from rrdemo.runs.log import RunLog
from rrdemo.voting import derive_seed


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p: 2 x P(X <= min(b, c)), X ~ Binomial(b + c, 1/2), capped at 1."""
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


@dataclass(frozen=True)
class PairedRow:
    task: str
    label: str  # "3c2t"
    strength: str
    ensemble: str
    questions: int
    maj: float
    rrmaj: float
    delta: float
    delta_lo: float
    delta_hi: float
    maj_only: int  # b: questions MAJ got right and RRMaj wrong
    rrmaj_only: int  # c
    p_mcnemar: float

    @property
    def both_right(self) -> int:
        return round(self.maj * self.questions) - self.maj_only

    @property
    def both_wrong(self) -> int:
        return self.questions - self.both_right - self.maj_only - self.rrmaj_only


@dataclass(frozen=True)
class AnswerRates:
    task: str
    label: str
    strength: str
    method: str
    answers: int
    right: float
    fooled: float
    other: float
    none: float  # no answer could be read (cut at L, or no final statement)


def _seed(condition: dict[str, Any]) -> int:
    """Seeded by the condition's name in the tables, like every draw of the report."""
    parts = ("paired", condition["task"], condition["label"], condition["strength"])
    return derive_seed(0, *parts, condition["ensemble"])


def paired_rows(log: RunLog) -> list[PairedRow]:
    """One row per condition whose finished questions carry both methods' decisions."""
    return list(paired_by_condition(log).values())


def paired_by_condition(log: RunLog) -> dict[str, PairedRow]:
    """`paired_rows` by condition key, in the order the log first finishes each condition."""
    by_condition: dict[str, list[tuple[bool, bool]]] = {}
    for record in log.finished_units():
        votes = record.get("votes", {})
        if "MAJ" in votes and "RRMaj" in votes:
            pair = (bool(votes["MAJ"].get("correct")), bool(votes["RRMaj"].get("correct")))
            by_condition.setdefault(record["condition"], []).append(pair)
    rows = {}
    for key, pairs in by_condition.items():
        cond = log.conditions[key]
        maj = np.array([m for m, _ in pairs], dtype=float)
        rr = np.array([r for _, r in pairs], dtype=float)
        diff = rr - maj
        rng = np.random.default_rng(_seed(cond))
        lo, hi = interval95(diff[resample(rng, len(diff), BOOT)].mean(axis=1))
        b = int(sum(m and not r for m, r in pairs))
        c = int(sum(r and not m for m, r in pairs))
        rows[key] = PairedRow(
            cond["task"], cond["label"], cond["strength"], cond["ensemble"], len(pairs),
            float(maj.mean()), float(rr.mean()), float(diff.mean()), lo, hi, b, c,
            mcnemar_exact(b, c),
        )  # fmt: skip
    return rows


def answer_rates(log: RunLog) -> list[AnswerRates]:
    """Per condition and method: the share of single answers (MAJ) or trajectories (RRMaj) that
    were right, gave the target, gave another answer, or gave none."""
    finished = {(r["condition"], r["question_id"]) for r in log.finished_units()}
    tallies: dict[tuple[str, str], list[str]] = {}
    for _, record in log.records:
        if record["type"] != "trajectory":
            continue
        if (record["condition"], record["question_id"]) not in finished:
            continue
        kind = (
            "right" if record.get("correct")
            else "fooled" if record.get("fooled")
            else "none" if record.get("vote_key") is None
            else "other"
        )  # fmt: skip
        tallies.setdefault((record["condition"], record["method"]), []).append(kind)
    rows = []
    for (key, method), kinds in tallies.items():
        cond, n = log.conditions[key], len(kinds)
        share = {k: kinds.count(k) / n for k in ("right", "fooled", "other", "none")}
        rows.append(AnswerRates(cond["task"], cond["label"], cond["strength"], method, n, **share))
    return rows


def paired_tables(log: RunLog) -> tuple[str, str, str, str]:
    """(paired.md, paired.csv, answer_rates.md, answer_rates.csv)."""
    rows = paired_rows(log)
    md = markdown_table(
        ["task", "config", "strength", "questions", "MAJ", "RRMaj", "Δ RRMaj - MAJ [95%]",
         "MAJ right only (b)", "RRMaj right only (c)", "McNemar exact p"],
        [
            [r.task, r.label, r.strength, r.questions, pct(r.maj), pct(r.rrmaj),
             f"{pct(r.delta, True)} [{pct(r.delta_lo, True)}, {pct(r.delta_hi, True)}]",
             r.maj_only, r.rrmaj_only, f"{r.p_mcnemar:.3g}"]
            for r in rows
        ],
    )  # fmt: skip
    rates = answer_rates(log)
    rates_md = markdown_table(
        ["task", "config", "strength", "method", "answers", "right", "fooled", "other", "none"],
        [
            [r.task, r.label, r.strength, r.method, r.answers, pct(r.right), pct(r.fooled),
             pct(r.other), pct(r.none)]
            for r in rates
        ],
    )  # fmt: skip
    return md, csv_text(rows), rates_md, csv_text(rates)
