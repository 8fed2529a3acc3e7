"""The report's tables: every analysis as markdown (accuracy % [95% interval]) and as CSV (fractions).

`rrdemo.report.write` puts them together; `rrdemo.report.adversary` uses the same cell format.
"""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from dataclasses import asdict
from typing import Any

from rrdemo.config import ct_label
from rrdemo.events import METHODS
from rrdemo.report.speakers import FinalSpeakerRow, MixRow, OpenerRow
from rrdemo.report.stats import TRIALS, Estimate
from rrdemo.report.tables import KPoint, MainRow, ScalingPoint, YieldRow


# -- cells ----------------------------------------------------------------------------------------
def pct(x: float, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}"


def ci_text(e: Estimate, signed: bool = False) -> str:
    return f"{pct(e.mean, signed)} [{pct(e.lo, signed)}, {pct(e.hi, signed)}]"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def csv_text(items: list[Any]) -> str:
    """CSV of dataclass rows or dicts; accuracies stay fractions in [0, 1], NaN becomes empty."""
    dicts = [x if isinstance(x, dict) else asdict(x) for x in items]
    buf = io.StringIO()
    if dicts:
        writer = csv.DictWriter(buf, fieldnames=list(dicts[0]), lineterminator="\n")
        writer.writeheader()
        for d in dicts:
            writer.writerow({k: _cell(v) for k, v in d.items()})
    return buf.getvalue()


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return "" if math.isnan(value) else round(value, 6)
    return value


# -- tables -------------------------------------------------------------------------------------
def main_table_md(rows: list[MainRow]) -> str:
    """The paper's layout: Ceiling | per config MAJ, RRMaj, Delta | Floor; one block per setting,
    one section per ensemble, one line per dataset. Cells: accuracy % [95% interval]. Each block's
    title names its estimator, the pool draws (the run's own decisions are the paired table's)."""
    blocks = []
    groups: dict[tuple, list[MainRow]] = defaultdict(list)
    for row in rows:
        groups[(row.strength, row.k, row.max_tokens, row.n, row.m)].append(row)
    for (strength, k, length, n, m), members in sorted(groups.items()):
        labels = sorted(
            {c.label for r in members for c in r.cells}, key=lambda s: int(s.split("c")[0])
        )
        header = ["Dataset", f"Ceiling ({ct_label(0, n)})"]
        for label in labels:
            header += [f"{label} MAJ", f"{label} RRMaj", f"{label} Δ"]
        header.append(f"Floor ({ct_label(n, 0)})")
        body = []
        for ensemble in sorted({r.ensemble for r in members}):
            body.append([f"**{ensemble}**"] + [""] * (len(header) - 1))
            for row in (r for r in members if r.ensemble == ensemble):
                cells = {c.label: c for c in row.cells}
                line = [row.task, ci_text(row.ceiling.maj) if row.ceiling else "–"]
                for label in labels:
                    cell = cells.get(label)
                    if cell is None:
                        line += ["–"] * 3
                        continue
                    better = cell.rrmaj.mean > cell.maj.mean
                    rr, delta = ci_text(cell.rrmaj), ci_text(cell.delta, signed=True)
                    line += [
                        ci_text(cell.maj),
                        f"**{rr}**" if better else rr,
                        f"**{delta}**" if better else delta,
                    ]
                line.append(ci_text(row.floor.maj) if row.floor else "–")
                body.append(line)
        title = (
            f"Pool-draw estimate (mean over {TRIALS} pool draws, not the run's decisions): "
            f"strength {strength}, N = {n}, K = {k}, L = {length}, M = {m}"
        )
        blocks.append(f"### {title}\n\n{markdown_table(header, body)}")
    return "\n\n".join(blocks)


def main_table_csv(rows: list[MainRow]) -> str:
    out = []
    for row in rows:
        cells = [
            ("ceiling", row.ceiling),
            *[("config", c) for c in row.cells],
            ("floor", row.floor),
        ]
        for role, cell in [(role, cell) for role, cell in cells if cell is not None]:
            for method, e in (("MAJ", cell.maj), ("RRMaj", cell.rrmaj), ("Delta", cell.delta)):
                out.append(
                    {
                        "ensemble": row.ensemble,
                        "dataset": row.task,
                        "strength": row.strength,
                        "n": row.n,
                        "k": row.k,
                        "max_tokens": row.max_tokens,
                        "m": row.m,
                        "config": cell.label,
                        "rho": cell.rho,
                        "role": role,
                        "method": method,
                        "accuracy": e.mean,
                        "trial_std": e.std,
                        "ci_lo": e.lo,
                        "ci_hi": e.hi,
                        "n_questions": e.n_questions,
                    }  # fmt: skip
                )
    return csv_text(out)


def scaling_tables(points: list[ScalingPoint]) -> tuple[str, str]:
    groups: dict[tuple, dict] = defaultdict(dict)
    for p in points:
        groups[(p.ensemble, p.strength, p.k, p.label, p.task)][(p.method, p.m)] = p
    blocks = []
    for (ens, strength, k, label, task), cells in groups.items():
        ms = sorted({m for _, m in cells})
        if task != "all":
            continue
        header = ["Method"] + [f"M={m}" for m in ms] + [f"Δ(M={ms[-1]}−1)"]
        body = []
        for method in (*METHODS, "Delta"):
            vals = [cells[(method, m)] for m in ms]
            name = "Δ(RRMaj−MAJ)" if method == "Delta" else method
            line = [name] + [f"{pct(v.mean, method == 'Delta')} ±{100 * v.std:.1f}" for v in vals]
            line.append(pct(vals[-1].mean - vals[0].mean, True) if method != "Delta" else "")
            body.append(line)
        blocks.append(
            f"### {ens}, {label}, {strength}, K = {k} (mean over datasets)\n\n{markdown_table(header, body)}"
        )
    return "\n\n".join(blocks), csv_text(points)


def speaker_tables(rows: list[FinalSpeakerRow]) -> tuple[str, str]:
    header = ["Ensemble", "Strength", "K", "Config (ρ)", "Clean-Last", "Corrupt-Last"]
    header += ["Δ (%)", "p-value"]
    body = [
        [
            r.ensemble,
            r.strength,
            r.k,
            f"{r.label} ({r.rho:.1f})",
            f"{pct(r.clean_acc)}% (n={r.clean_n})",
            f"{pct(r.corrupt_acc)}% (n={r.corrupt_n})",
            pct(r.delta, True),
            "–" if math.isnan(r.p_value) else f"{r.p_value:.4f}",
        ]  # fmt: skip
        for r in rows
    ]
    return markdown_table(header, body), csv_text(rows)


def mix_tables(rows: list[MixRow]) -> tuple[str, str]:
    header = ["Dataset", "Ensemble", "Strength", "K", "Config", "Mixed trajectories"]
    header += ["RRMaj acc. mixed", "RRMaj acc. single-role"]
    body = [
        [
            *r.setting,
            f"{pct(r.mixed_share)}% ({r.mixed_n} of {r.trajectories})",
            f"{pct(r.mixed_acc)}% (n={r.mixed_n})",
            f"{pct(r.single_acc)}% (n={r.single_n})",
        ]  # fmt: skip
        for r in rows
    ]
    return markdown_table(header, body), csv_text(rows)


def opener_tables(rows: list[OpenerRow]) -> tuple[str, str]:
    header = ["Dataset", "Ensemble", "Strength", "K", "Config", "Opened by a corrupted agent"]
    header += ["no honest agent wrote", "right", "fooled", "Opened by an honest agent"]
    header += ["right", "fooled"]
    body = [
        [
            *r.setting,
            f"{pct(r.corrupt_open_n / r.trajectories)}% ({r.corrupt_open_n} of {r.trajectories})",
            f"{r.corrupt_only_n} of {r.corrupt_open_n}",
            f"{pct(r.corrupt_open_acc)}%",
            f"{pct(r.corrupt_open_fooled)}%",
            f"{r.honest_open_n}",
            f"{pct(r.honest_open_acc)}%",
            f"{pct(r.honest_open_fooled)}%",
        ]  # fmt: skip
        for r in rows
    ]
    return markdown_table(header, body), csv_text(rows)


def k_tables(points: list[KPoint]) -> tuple[str, str]:
    groups: dict[tuple, dict] = defaultdict(dict)
    for p in points:
        groups[(p.ensemble, p.strength, p.label)][(p.task, p.k)] = p
    blocks = []
    for (ens, strength, label), cells in groups.items():
        tasks = sorted({t for t, _ in cells if t != "all"}) + ["all"]
        body = [
            [str(k)] + [pct(cells[(t, k)].rrmaj) if (t, k) in cells else "–" for t in tasks]
            for k in sorted({k for _, k in cells})
        ]
        header = ["K (tokens)"] + [t if t != "all" else "AVG" for t in tasks]
        blocks.append(
            f"### RRMaj accuracy (%), {ens}, {label}, {strength}\n\n{markdown_table(header, body)}"
        )
    return "\n\n".join(blocks), csv_text(points)


def yield_tables(rows: list[YieldRow]) -> tuple[str, str]:
    header = ["Ensemble", "Dataset", "Strength", "K", "mean Δ, ρ ≤ 0.4", "mean Δ, ρ ≥ 0.6"]
    body = [
        [
            y.ensemble,
            y.task if y.task != "all" else "**all**",
            y.strength,
            y.k,
            f"{pct(y.safe_delta, True)} ({y.n_safe})",
            f"{pct(y.compromised_delta, True)} ({y.n_compromised})",
        ]  # fmt: skip
        for y in rows
    ]
    return markdown_table(header, body), csv_text(rows)
