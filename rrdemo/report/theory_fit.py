"""The theory's parameters fitted from metered runs (docs/theory.md, "Estimating gamma_H and delta").

Every reading of the truth meter (rrdemo.meter) gives z and V = ln(1 + exp(-z)) for a reader of
a trajectory after a turn. Consecutive readings of the same reader and trajectory make a *step*:
the turn's writer (honest or corrupted), the tokens it wrote, and the change of z, of V and of
ln V. Per model, task, method, reader and writer role, the per-token rates are ratio estimators
(sum of changes over sum of tokens), with 95% bootstrap intervals over trajectories (a
trajectory's steps are resampled together). The paper's parametrisation (appendix B) has V shrink
by a factor (1 - gamma_H) per honest token and grow by (1 + alpha) per corrupted token
(delta(V) = alpha V), so the rates of ln V give

    gamma_H = 1 - exp(r_honest),   alpha = exp(r_corrupted) - 1,

and with them the predicted rho_max(K) (rrdemo.theory). Pure functions, no I/O.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rrdemo.errors import RRError
from rrdemo.meter import potential
from rrdemo.report.stats import BOOT, interval95, resample
from rrdemo.report.tables import MainRow
from rrdemo.theory import stability_bound

ROLES = ("honest", "corrupted")


@dataclass(frozen=True)
class Step:
    """One turn as a reader saw it: who wrote, how many tokens, what changed."""

    group: tuple[str, str, int, str, str]  # (ensemble, task, K, method, reader role)
    unit: tuple  # (condition, question, method, trajectory): the bootstrap's cluster
    writer: str  # "honest" | "corrupted"
    tokens: int
    dz: float
    dv: float
    dlogv: float


def meter_steps(metered: Iterable[tuple[dict, dict]]) -> list[Step]:
    """The steps of every (condition, trajectory record) pair whose record has meter readings.

    A reading's `corrupted` flag names the writer of the turn just read; the opening reading
    (turn -1) only starts the chain. Turns that wrote no token are left out.
    """
    steps = []
    for cond, record in metered:
        readings = sorted(record.get("meter") or [], key=lambda r: r["turn"])
        unit = (cond["key"], record["question_id"], record["method"], record["trajectory"])
        for before, after in zip(readings, readings[1:], strict=False):
            tokens = after["n_tokens"] - before["n_tokens"]
            if tokens <= 0 or after.get("corrupted") is None:
                continue
            for reader, now in after["readers"].items():
                then = before["readers"].get(reader)
                if then is None:
                    continue
                v0, v1 = potential(then["z"]), potential(now["z"])
                steps.append(
                    Step(
                        (cond["ensemble"], cond["task"], int(cond["k"]), record["method"], reader),
                        unit,
                        "corrupted" if after["corrupted"] else "honest",
                        tokens,
                        now["z"] - then["z"],
                        v1 - v0,
                        math.log(v1) - math.log(v0),
                    )
                )
    return steps


@dataclass(frozen=True)
class Rate:
    """A per-token rate with its 95% bootstrap interval."""

    value: float
    lo: float
    hi: float


@dataclass(frozen=True)
class RoleFit:
    """Per-token changes under one writer role."""

    steps: int
    tokens: int
    dz: Rate  # mean change of z per token
    dv: Rate  # mean change of V per token
    dlogv: Rate  # mean change of ln V per token: the paper's log-rate


@dataclass(frozen=True)
class Fit:
    """One (ensemble, task, K, method, reader): both roles and the implied parameters."""

    ensemble: str
    task: str
    k: int
    method: str
    reader: str
    roles: dict[str, RoleFit]  # "honest", "corrupted": those that wrote

    def gamma_h(self) -> Rate | None:
        """gamma_H = 1 - exp(r_honest) (negative when honest turns raise V: no pull)."""
        role = self.roles.get("honest")
        if role is None:
            return None
        r = role.dlogv
        return Rate(-math.expm1(r.value), -math.expm1(r.hi), -math.expm1(r.lo))

    def alpha(self) -> Rate | None:
        """alpha = exp(r_corrupted) - 1 (negative when corrupted turns lower V)."""
        role = self.roles.get("corrupted")
        if role is None:
            return None
        r = role.dlogv
        return Rate(math.expm1(r.value), math.expm1(r.lo), math.expm1(r.hi))

    def rho_max(self) -> float | None:
        """The bound at this K with the fitted parameters; None where they leave the paper's
        domain (gamma_H in (0, 1), alpha >= 0; a negative alpha is taken as 0)."""
        gamma, alpha = self.gamma_h(), self.alpha()
        if gamma is None or alpha is None or not 0 < gamma.value < 1:
            return None
        return stability_bound(gamma.value, max(alpha.value, 0.0), self.k).rho_max


def _rates(steps: Sequence[Step], seed: int, boot: int) -> RoleFit:
    """Ratio estimators of the three changes, bootstrapped over units (trajectories): a resample's
    ratio is the sum of its drawn units' changes over the sum of their tokens."""
    units: dict[tuple, list[int]] = defaultdict(list)
    for i, step in enumerate(steps):
        units[step.unit].append(i)
    clusters = list(units.values())
    draws = resample(np.random.default_rng(seed), len(clusters), boot)
    # per unit, its steps' sums in step order (plain Python floats: the same bits on any CPU)
    tokens = np.array([float(sum(steps[i].tokens for i in c)) for c in clusters])
    den = tokens[draws].sum(axis=1)
    total = float(tokens.sum())
    rates = {}
    for field in ("dz", "dv", "dlogv"):
        changes = np.array([float(sum(getattr(steps[i], field) for i in c)) for c in clusters])
        point = float(sum(getattr(s, field) for s in steps)) / total if total else math.nan
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(den > 0, changes[draws].sum(axis=1) / den, math.nan)
        rates[field] = Rate(point, *interval95(values, skip_nan=True))
    return RoleFit(len(steps), sum(s.tokens for s in steps), **rates)


def fit(steps: Iterable[Step], seed: int = 0, boot: int = BOOT) -> list[Fit]:
    """One `Fit` per (ensemble, task, K, method, reader), sorted."""
    grouped: dict[tuple, dict[str, list[Step]]] = defaultdict(lambda: defaultdict(list))
    for step in steps:
        grouped[step.group][step.writer].append(step)
    fits = []
    for group in sorted(grouped):
        roles = {
            role: _rates(grouped[group][role], seed, boot) for role in ROLES if grouped[group][role]
        }
        fits.append(Fit(*group, roles=roles))
    return fits


# -- formatting: theory_fit.md and the Theory tab's JSON --------------------------------------------
def _rate(rate: Rate | None, digits: int = 4) -> str:
    if rate is None or math.isnan(rate.value):
        return "–"
    return f"{rate.value:+.{digits}f} [{rate.lo:+.{digits}f}, {rate.hi:+.{digits}f}]"


def observed(rows: Iterable[MainRow]) -> dict[tuple[str, str, int], list[dict]]:
    """RRMaj and MAJ accuracy against rho per (ensemble, task, K), from the main table."""
    points: dict[tuple[str, str, int], list[dict]] = defaultdict(list)
    for row in rows:
        for cell in [row.ceiling, *row.cells, row.floor]:
            if cell is None:
                continue
            points[(row.ensemble, row.task, row.k)].append(
                {
                    "rho": cell.rho,
                    "label": cell.label,
                    "rrmaj": cell.rrmaj.mean,
                    "maj": cell.maj.mean,
                }
            )
    return points


def fit_records(fits: Sequence[Fit], rows: Iterable[MainRow]) -> list[dict]:
    """Per (ensemble, task, K), the RR fit of the honest reader with the observed accuracies:
    what the Theory tab loads (theory_fit.json)."""
    seen = observed(rows)
    records = []
    for f in fits:
        if f.method != "RRMaj" or f.reader != "honest":
            continue
        gamma, alpha = f.gamma_h(), f.alpha()
        records.append(
            {
                "ensemble": f.ensemble,
                "task": f.task,
                "k": f.k,
                "gamma_h": None if gamma is None else [gamma.value, gamma.lo, gamma.hi],
                "alpha": None if alpha is None else [alpha.value, alpha.lo, alpha.hi],
                "rho_max": f.rho_max(),
                "observed": seen.get((f.ensemble, f.task, f.k), []),
            }
        )
    return records


def theory_fit_md(fits: Sequence[Fit], rows: Iterable[MainRow]) -> str:
    """theory_fit.md: the per-token rates, the implied parameters, rho_max(K) beside the
    observed accuracy against rho."""
    if not fits:
        return "No metered runs in this log (run the sweep with `meter: true`)."
    lines = [
        "Per-token changes of the truth meter (docs/theory.md), 95% bootstrap intervals over "
        f"trajectories ({BOOT:,} resamples). z = logit(p_gold) - logit(p_target); V = ln(1 + exp(-z)). The paper "
        "expects honest tokens to lower V (gamma_H > 0) and corrupted ones to raise it "
        "(alpha >= 0).",
        "",
        "| ensemble | task | K | method | reader | writer | steps | tokens | Δz / token | ΔV / token | Δln V / token |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for f in fits:
        for role, r in f.roles.items():
            lines.append(
                f"| {f.ensemble} | {f.task} | {f.k} | {f.method} | {f.reader} | {role} | "
                f"{r.steps} | {r.tokens} | {_rate(r.dz)} | {_rate(r.dv)} | {_rate(r.dlogv)} |"
            )
    lines += [
        "",
        "## Implied parameters and the predicted bound",
        "",
        "gamma_H = 1 - exp(Δln V per honest token), alpha = exp(Δln V per corrupted token) - 1, "
        "read off RR trajectories by each reader; rho_max(K) at the run's K (rrdemo.theory; "
        "– where gamma_H is outside (0, 1)).",
        "",
        "| ensemble | task | K | reader | gamma_H | alpha | rho_max(K) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for f in fits:
        if f.method != "RRMaj":
            continue
        bound = f.rho_max()
        lines.append(
            f"| {f.ensemble} | {f.task} | {f.k} | {f.reader} | {_rate(f.gamma_h(), 5)} | "
            f"{_rate(f.alpha(), 5)} | {'–' if bound is None else f'{bound:.1%}'} |"
        )
    lines += [
        "",
        "## Observed accuracy against rho (main table, M = N)",
        "",
        "| ensemble | task | K | config | rho | MAJ | RRMaj |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for (ensemble, task, k), points in sorted(observed(rows).items()):
        for p in points:
            lines.append(
                f"| {ensemble} | {task} | {k} | {p['label']} | {p['rho']:.2f} | "
                f"{100 * p['maj']:.1f}% | {100 * p['rrmaj']:.1f}% |"
            )
    return "\n".join(lines) + "\n"


def load_fit_records(path: Path | str) -> list[dict]:
    """The records of a report's theory_fit.json (what `fit_records` wrote); RRError otherwise."""
    try:
        records = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RRError(f"cannot read the theory fit {path}: {exc}") from None
    keys = {"ensemble", "task", "k", "gamma_h", "alpha", "rho_max", "observed"}
    if not isinstance(records, list) or not all(
        isinstance(r, dict) and keys <= set(r) for r in records
    ):
        raise RRError(f"{path} is not a theory_fit.json written by `rrdemo report`")
    return records
