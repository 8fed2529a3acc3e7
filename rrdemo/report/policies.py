"""Two runs of the same questions paired: RRMaj under one reading of the shared text against the
other run's MAJ and RRMaj (the end-of-sequence policies `end` and `pass`, say).

A sweep that changes only what RR does (its `eos_policy`) and runs RRMaj alone (`methods:
[RRMaj]`) is paired with the run it varies, condition by condition (the same task, config label,
strength, ensemble and K) and question by question. MAJ does not read the policy, so it is taken
from the base run. Per condition, on the questions both runs finished: MAJ, RRMaj (base) and
RRMaj (other), and three paired differences, each with a bootstrap 95% interval over questions and
McNemar's exact p: RRMaj - MAJ, RRMaj(other) - MAJ, RRMaj(other) - RRMaj. Pure functions over two
parsed logs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rrdemo.events import METHODS
from rrdemo.report.paired import PairedRow
from rrdemo.report.pooled import paired_estimate, verdict
from rrdemo.report.render import csv_text, markdown_table, pct
from rrdemo.runs.log import RunLog
from rrdemo.voting import derive_seed


@dataclass(frozen=True)
class Difference:
    """A paired difference of two decisions over the same questions."""

    delta: float
    lo: float
    hi: float
    first_only: int  # questions only the first (subtracted) method got right
    second_only: int
    p_mcnemar: float
    detectable: float | None  # the smallest lead found with 80% power (`pooled.smallest_rescue`)

    def text(self) -> str:
        return f"{pct(self.delta, True)} [{pct(self.lo, True)}, {pct(self.hi, True)}]"

    @property
    def verdict(self) -> str:
        """The interval in words (`rrdemo.report.pooled.verdict`)."""
        return verdict(self.lo, self.hi)


@dataclass(frozen=True)
class PolicyRow:
    task: str
    label: str
    strength: str
    ensemble: str
    base: str  # what the base run's RR read, e.g. "end"
    other: str  # e.g. "pass"
    questions: int
    maj: float
    rrmaj: float
    rrmaj_other: float
    rr_vs_maj: Difference
    other_vs_maj: Difference
    other_vs_rr: Difference
    k: int = 0  # the K both runs ran

    def other_paired(self) -> PairedRow:
        """RRMaj (other) against the base run's MAJ as one paired row: the other run's headline
        (its board row, the Arena's result line and the results table read this one)."""
        d = self.other_vs_maj
        return PairedRow(
            self.task, self.label, self.strength, self.ensemble, self.questions, self.maj,
            self.rrmaj_other, d.delta, d.lo, d.hi, d.first_only, d.second_only, d.p_mcnemar,
        )  # fmt: skip


def match_key(cond: dict[str, Any]) -> tuple:
    return cond["task"], cond["label"], cond["strength"], cond["ensemble"], cond["k"]


def decisions_by_condition(log: RunLog, method: str) -> dict[tuple, dict[str, bool]]:
    """(condition match key) -> question -> whether `method`'s decision was right."""
    out: dict[tuple, dict[str, bool]] = {}
    for record in log.finished_units():
        vote = record.get("votes", {}).get(method)
        if vote is None:
            continue
        key = match_key(log.conditions[record["condition"]])
        out.setdefault(key, {})[record["question_id"]] = bool(vote.get("correct"))
    return out


def _policy(log: RunLog, key: tuple) -> str:
    for cond in log.conditions.values():
        if match_key(cond) == key:
            return str(cond.get("config", {}).get("eos_policy", "end"))
    return "?"


def _difference(first: np.ndarray, second: np.ndarray, seed: int) -> Difference:
    e = paired_estimate([(first == 1, second == 1)], seed)
    return Difference(e.delta, e.lo, e.hi, e.maj_only, e.rrmaj_only, e.p_mcnemar, e.detectable)


def pair_seed(key: tuple) -> int:
    """The seed of a condition's three differences (+0, +1, +2 in the order of `PolicyRow`)."""
    return derive_seed(0, "policies", *map(str, key))


def policy_rows(base: RunLog, other: RunLog) -> list[PolicyRow]:
    """One row per condition of `other` that `base` also ran, on the questions both finished."""
    maj, rr = decisions_by_condition(base, "MAJ"), decisions_by_condition(base, "RRMaj")
    rr_other = decisions_by_condition(other, "RRMaj")
    rows = []
    for key, decided in rr_other.items():
        if key not in maj or key not in rr:
            continue
        qids = [q for q in decided if q in maj[key] and q in rr[key]]
        if not qids:
            continue
        a = np.array([maj[key][q] for q in qids], dtype=float)
        b = np.array([rr[key][q] for q in qids], dtype=float)
        c = np.array([decided[q] for q in qids], dtype=float)
        seed = pair_seed(key)
        task, label, strength, ensemble, k = key
        rows.append(
            PolicyRow(
                task, label, strength, ensemble, _policy(base, key), _policy(other, key),
                len(qids), float(a.mean()), float(b.mean()), float(c.mean()),
                _difference(a, b, seed), _difference(a, c, seed + 1), _difference(b, c, seed + 2),
                k,
            )
        )  # fmt: skip
    return rows


def other_outcomes(base: RunLog, other: RunLog) -> dict[str, PairedRow]:
    """`PolicyRow.other_paired` by the other run's condition key (as `paired_by_condition`
    gives a run's own rows)."""
    keys = {match_key(cond): key for key, cond in other.conditions.items()}
    return {
        keys[(r.task, r.label, r.strength, r.ensemble, r.k)]: r.other_paired()
        for r in policy_rows(base, other)
    }


def joined(base: RunLog, other: RunLog) -> RunLog:
    """The other run read as one run of both methods: each of its finished questions with the
    base run's MAJ answers and vote on the same question (MAJ does not read the policy), so
    replays, board rows and paired tables read it as they read any run. Questions the base run
    did not finish are left out."""
    base_keys = {match_key(cond): key for key, cond in base.conditions.items()}
    base_units = {
        (done["condition"], done["question_id"]): (done, trajectories)
        for done, trajectories in base.units()
        if done is not None
    }
    records: list[tuple[int, dict[str, Any]]] = []
    finished: set[tuple[str, str]] = set()
    for done, trajectories in other.units():
        if done is None:
            continue
        key, qid = done["condition"], done["question_id"]
        found = base_units.get((base_keys.get(match_key(other.conditions[key])), qid))
        if found is None or "MAJ" not in found[0].get("votes", {}):
            continue
        base_done, base_trajectories = found
        maj = [dict(t, condition=key) for t in base_trajectories if t.get("method") == "MAJ"]
        both = {
            name: {"MAJ": base_done[name]["MAJ"], **done[name]}
            for name in ("votes", "compute")
            if "MAJ" in base_done.get(name, {})
        }
        records += [(0, r) for r in (*maj, *trajectories, {**done, **both})]
        finished.add((key, qid))
    conditions = {k: {**c, "methods": list(METHODS)} for k, c in other.conditions.items()}
    return RunLog(other.path, other.header, conditions, records, finished)


def policy_tables(base: RunLog, other: RunLog) -> tuple[str, str]:
    """(markdown, csv) of `policy_rows`."""
    rows = policy_rows(base, other)
    md = markdown_table(
        ["task", "config", "strength", "questions", "MAJ", "RRMaj (base)", "RRMaj (other)",
         "RRMaj - MAJ [95%], p", "RRMaj(other) - MAJ [95%], p",
         "RRMaj(other) - RRMaj [95%], p"],
        [
            [r.task, r.label, r.strength, r.questions, pct(r.maj), f"{pct(r.rrmaj)} ({r.base})",
             f"{pct(r.rrmaj_other)} ({r.other})",
             *(f"{d.text()}, {d.p_mcnemar:.3g}" for d in (r.rr_vs_maj, r.other_vs_maj,
                                                          r.other_vs_rr))]
            for r in rows
        ],
    )  # fmt: skip
    flat = [
        {
            "task": r.task, "label": r.label, "strength": r.strength, "ensemble": r.ensemble,
            "base": r.base, "other": r.other, "questions": r.questions, "maj": r.maj,
            "rrmaj": r.rrmaj, "rrmaj_other": r.rrmaj_other,
            **{f"{name}_{field}": getattr(d, field)
               for name, d in (("rr_vs_maj", r.rr_vs_maj), ("other_vs_maj", r.other_vs_maj),
                               ("other_vs_rr", r.other_vs_rr))
               for field in ("delta", "lo", "hi", "first_only", "second_only", "p_mcnemar",
                             "detectable")},
        }
        for r in rows
    ]  # fmt: skip
    return md, csv_text(flat)
