"""MAJ against RRMaj on the same questions, as the run decided them (M = M*, no pool draws).

Per condition: both methods' accuracy, the paired difference RRMaj - MAJ with a bootstrap 95%
interval over questions, and McNemar's exact test on the questions where exactly one method was
right (b: MAJ right only, c: RRMaj right only; two-sided binomial p of min(b, c) in b + c at 1/2).
Per method, what each single answer or trajectory was: right, fooled (the target), other or no
answer. Pure functions over a parsed log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rrdemo.report.pooled import paired_estimate, verdict
from rrdemo.report.render import csv_text, markdown_table, pct
from rrdemo.runs.log import RunLog
from rrdemo.voting import derive_seed


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
    # the smallest lead McNemar's exact test finds with 80% power at this row's discordance
    # (`rrdemo.report.pooled.smallest_rescue`); None: none can
    detectable: float | None = None

    @property
    def verdict(self) -> str:
        """The interval in words (`rrdemo.report.pooled.verdict`)."""
        return verdict(self.delta_lo, self.delta_hi)

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


def condition_seed(condition: dict[str, Any]) -> int:
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
        e = paired_estimate([([m for m, _ in pairs], [r for _, r in pairs])], condition_seed(cond))
        rows[key] = PairedRow(
            cond["task"], cond["label"], cond["strength"], cond["ensemble"], e.questions,
            e.maj, e.rrmaj, e.delta, e.lo, e.hi, e.maj_only, e.rrmaj_only, e.p_mcnemar,
            e.detectable,
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


def detectable_text(value: float | None) -> str:
    """`PairedRow.detectable` as the tables write it (points)."""
    return "none at this discordance" if value is None else pct(value, True)


def paired_tables(log: RunLog) -> tuple[str, str, str, str]:
    """(paired.md, paired.csv, answer_rates.md, answer_rates.csv)."""
    rows = paired_rows(log)
    md = markdown_table(
        ["task", "config", "strength", "questions", "MAJ", "RRMaj", "Δ RRMaj - MAJ [95%]",
         "MAJ right only (b)", "RRMaj right only (c)", "McNemar exact p",
         "smallest lead detectable (80% power)"],
        [
            [r.task, r.label, r.strength, r.questions, pct(r.maj), pct(r.rrmaj),
             f"{pct(r.delta, True)} [{pct(r.delta_lo, True)}, {pct(r.delta_hi, True)}]",
             r.maj_only, r.rrmaj_only, f"{r.p_mcnemar:.3g}", detectable_text(r.detectable)]
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
