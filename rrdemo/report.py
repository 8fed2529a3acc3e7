"""Turn an experiment log into the paper's tables (markdown + CSV) and figures (plotly HTML + PNG),
and read the log for `rrdemo export` (rrdemo/cli/export.py).

    write_report("runs/small.jsonl", "runs/small_report")   -> the files written

The log is read and every analysis computed before anything is written; the files are written
into a temporary folder beside the output and then moved in, so a bad log overwrites nothing.
"""

from __future__ import annotations

import csv
import io
import math
import os
import shutil
import tempfile
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rrdemo.analysis.pools import Estimate, Outcome
from rrdemo.analysis.speaking import SpeakerRow, final_speaker, speaker_mix
from rrdemo.analysis.tables import (
    KPoint,
    MainRow,
    ScalingPoint,
    asymmetric_yield,
    k_ablation,
    m_scaling,
    main_table,
    rho_curve,
)
from rrdemo.errors import RRError
from rrdemo.paper.beside import INTRO, beside_csv, beside_markdown
from rrdemo.paper.match import run_beside
from rrdemo.speakers import chunk_roles

_CONDITION_FIELDS = (
    "key",
    "task",
    "ensemble",
    "strength",
    "k",
    "max_tokens",
    "n",
    "c",
    "m_star",
    "config",
)
_TRAJECTORY_FIELDS = (
    "condition",
    "question_id",
    "method",
    "trajectory",
    "vote_key",
    "correct",
    "last_corrupted",
)


@dataclass
class Run:
    """A parsed experiment log: its header, its conditions and the rows of its finished units."""

    path: Path
    header: dict[str, Any]
    conditions: dict[str, dict[str, Any]]
    outcomes: list[Outcome] = field(default_factory=list)
    units: int = 0  # finished (condition, question) units


def _turn_policy(cond: dict) -> str:
    return cond.get("turn_policy", cond.get("config", {}).get("turn_policy", "fixed"))


def turn_tag(policy: str) -> str:
    """What an ensemble's name gets under an adaptive turn policy (rrdemo.turns), e.g.
    " [turns: sentence]": the main table, the K ablation and its plot then show each policy
    on its own lines; the fixed rule (the paper's) adds nothing."""
    return "" if policy == "fixed" else f" [turns: {policy}]"


def read_run(path: Path | str) -> Run:
    """Parse and check a log written by `rrdemo experiment`; RRError naming the first problem.

    Only finished units count; rows of a unit cut short by a kill, and a last line cut mid-write,
    are left out (the run resumes them).
    """
    from rrdemo.experiment import LOG_FORMAT, LOG_VERSION, parse_log_line  # noqa: PLC0415

    path = Path(path)
    if not path.is_file():
        raise RRError(f"{path} does not exist or is not a file; give the .jsonl log of a run")
    raw = path.read_bytes()
    lines = raw.split(b"\n")[:-1]  # what follows the last newline is a write cut short
    records = []
    for number, line in enumerate(lines, start=1):
        record = parse_log_line(path, number, line)
        if not isinstance(record, dict):
            raise RRError(f"{path}: line {number} is not a JSON object")
        records.append((number, record))
    if (
        not records
        or records[0][1].get("type") != "header"
        or records[0][1].get("format") != LOG_FORMAT
    ):
        raise RRError(f"{path} is not an rrdemo experiment log (line 1 has no {LOG_FORMAT} header)")
    header = records[0][1]
    if header.get("version") != LOG_VERSION:
        raise RRError(f"{path}: log format version {header.get('version')!r} is not supported")
    conditions = {}
    for cond in header.get("conditions") or []:
        missing = [f for f in _CONDITION_FIELDS if not isinstance(cond, dict) or f not in cond]
        if missing:
            raise RRError(f"{path}: a condition in the header lacks {', '.join(missing)}")
        conditions[cond["key"]] = cond
    if not conditions:
        raise RRError(f"{path}: the header lists no conditions")
    done = set()
    for number, record in records[1:]:
        if record.get("type") == "done":
            if record.get("condition") not in conditions:
                raise RRError(
                    f"{path}: line {number} refers to a condition the header does not list"
                )
            done.add((record["condition"], record.get("question_id")))
        elif record.get("type") != "trajectory":
            raise RRError(f"{path}: line {number} is not a trajectory or done record")
    run = Run(path, header, conditions, units=len(done))
    seen = set()
    for number, record in records[1:]:
        if (
            record["type"] != "trajectory"
            or (record.get("condition"), record.get("question_id")) not in done
        ):
            continue
        missing = [f for f in _TRAJECTORY_FIELDS if f not in record]
        if missing or record["method"] not in ("MAJ", "RRMaj"):
            raise RRError(
                f"{path}: line {number} is not a complete trajectory record ({', '.join(missing) or 'method'})"
            )
        ident = (record["condition"], record["question_id"], record["method"], record["trajectory"])
        if ident in seen:
            raise RRError(f"{path}: line {number} repeats trajectory {ident}; the log is damaged")
        seen.add(ident)
        cond = conditions[record["condition"]]
        run.outcomes.append(
            Outcome(
                condition=cond["key"],
                ensemble=cond["ensemble"] + turn_tag(_turn_policy(cond)),
                task=cond["task"],
                strength=cond["strength"],
                k=int(cond["k"]),
                max_tokens=int(cond["max_tokens"]),
                n=int(cond["n"]),
                c=int(cond["c"]),
                m_star=int(cond["m_star"]),
                question_id=str(record["question_id"]),
                method=record["method"],
                trajectory=int(record["trajectory"]),
                vote_key=record["vote_key"],
                correct=bool(record["correct"]),
                corrupted=bool(record["last_corrupted"]),
                mixed=_mixed(record),
                adversary=cond.get("adversary", cond.get("config", {}).get("adversary", "static")),
            )
        )
    if not run.outcomes:
        raise RRError(f"{path} has no finished questions yet; run (or resume) the experiment first")
    return run


def _mixed(record: dict) -> bool | None:
    """An RR trajectory record's chunks: did both an honest and a corrupted agent write? (MAJ: None)"""
    if record["method"] != "RRMaj" or not isinstance(record.get("chunks"), list):
        return None
    return len(chunk_roles(record["chunks"])) == 2


# -- formatting ---------------------------------------------------------------------------------
def pct(x: float, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{100 * x:+.1f}" if signed else f"{100 * x:.1f}"


def _ci(e: Estimate, signed: bool = False) -> str:
    return f"{pct(e.mean, signed)} [{pct(e.lo, signed)}, {pct(e.hi, signed)}]"


def _md(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _csv(items: list[Any]) -> str:
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
    one section per ensemble, one line per dataset. Cells: accuracy % [95% interval]."""
    blocks = []
    groups: dict[tuple, list[MainRow]] = defaultdict(list)
    for row in rows:
        groups[(row.strength, row.k, row.max_tokens, row.n, row.m)].append(row)
    for (strength, k, length, n, m), members in sorted(groups.items()):
        labels = sorted(
            {c.label for r in members for c in r.cells}, key=lambda s: int(s.split("c")[0])
        )
        header = ["Dataset", f"Ceiling ({0}c{n}t)"]
        for label in labels:
            header += [f"{label} MAJ", f"{label} RRMaj", f"{label} Δ"]
        header.append(f"Floor ({n}c0t)")
        body = []
        for ensemble in sorted({r.ensemble for r in members}):
            body.append([f"**{ensemble}**"] + [""] * (len(header) - 1))
            for row in (r for r in members if r.ensemble == ensemble):
                cells = {c.label: c for c in row.cells}
                line = [row.task, _ci(row.ceiling.maj) if row.ceiling else "–"]
                for label in labels:
                    cell = cells.get(label)
                    if cell is None:
                        line += ["–"] * 3
                        continue
                    better = cell.rrmaj.mean > cell.maj.mean
                    rr, delta = _ci(cell.rrmaj), _ci(cell.delta, signed=True)
                    line += [
                        _ci(cell.maj),
                        f"**{rr}**" if better else rr,
                        f"**{delta}**" if better else delta,
                    ]
                line.append(_ci(row.floor.maj) if row.floor else "–")
                body.append(line)
        title = f"Strength {strength}, N = {n}, K = {k}, L = {length}, M = {m}"
        blocks.append(f"### {title}\n\n{_md(header, body)}")
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
    return _csv(out)


def _scaling_tables(points) -> tuple[str, str]:
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
        for method in ("MAJ", "RRMaj", "Delta"):
            vals = [cells[(method, m)] for m in ms]
            name = "Δ(RRMaj−MAJ)" if method == "Delta" else method
            line = [name] + [f"{pct(v.mean, method == 'Delta')} ±{100 * v.std:.1f}" for v in vals]
            line.append(pct(vals[-1].mean - vals[0].mean, True) if method != "Delta" else "")
            body.append(line)
        blocks.append(
            f"### {ens}, {label}, {strength}, K = {k} (mean over datasets)\n\n{_md(header, body)}"
        )
    return "\n\n".join(blocks), _csv(points)


def _speaker_tables(rows) -> tuple[str, str]:
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
    return _md(header, body), _csv(rows)


def _mix_tables(rows) -> tuple[str, str]:
    header = ["Dataset", "Ensemble", "Strength", "K", "Config", "Mixed trajectories"]
    header += ["RRMaj acc. mixed", "RRMaj acc. single-role"]
    body = [
        [
            r.task,
            r.ensemble,
            r.strength,
            r.k,
            r.label,
            f"{pct(r.mixed_share)}% ({r.mixed_n} of {r.trajectories})",
            f"{pct(r.mixed_acc)}% (n={r.mixed_n})",
            f"{pct(r.single_acc)}% (n={r.single_n})",
        ]  # fmt: skip
        for r in rows
    ]
    return _md(header, body), _csv(rows)


def _k_tables(points) -> tuple[str, str]:
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
        blocks.append(f"### RRMaj accuracy (%), {ens}, {label}, {strength}\n\n{_md(header, body)}")
    return "\n\n".join(blocks), _csv(points)


def _yield_tables(rows) -> tuple[str, str]:
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
    return _md(header, body), _csv(rows)


# -- figures ------------------------------------------------------------------------------------
def _figure(title: str, x_title: str):
    import plotly.graph_objects as go  # noqa: PLC0415

    fig = go.Figure()
    fig.update_layout(
        title=title,
        xaxis_title=x_title,
        yaxis_title="accuracy (%)",
        yaxis_range=[0, 100],
        template="plotly_white",
        width=900,
        height=520,
    )
    return fig


COLORS = {"MAJ": "#636EFA", "RRMaj": "#EF553B"}


def _series(
    fig, name: str, xs, ys, dash: str = "solid", width: float = 3, group: str | None = None
) -> None:
    import plotly.graph_objects as go  # noqa: PLC0415

    fig.add_trace(
        go.Scatter(
            x=list(xs),
            y=[100 * y for y in ys],
            name=name,
            mode="lines+markers",
            line={"dash": dash, "width": width, "color": COLORS.get(group or "")},
            legendgroup=group,
        )
    )


def rho_figure(points):
    fig = _figure("Accuracy against the corruption ratio ρ = c/N (M = N)", "ρ = c / N")
    groups = sorted({(p.ensemble, p.strength, p.k) for p in points})
    for ens, strength, k in groups:
        tag = f" · {ens}, {strength}, K={k}" if len(groups) > 1 else ""
        tasks = sorted(
            {p.task for p in points if (p.ensemble, p.strength, p.k) == (ens, strength, k)}
        )
        if len(tasks) == 2:  # one dataset: its mean is itself
            tasks = [t for t in tasks if t != "all"]
        for number, task in enumerate(tasks):
            dash = ("dot", "dash", "dashdot", "longdash")[number % 4]
            for method in ("MAJ", "RRMaj"):
                ps = [
                    p
                    for p in points
                    if (p.ensemble, p.strength, p.k, p.task, p.method)
                    == (ens, strength, k, task, method)
                ]
                mean = task == "all" or len(tasks) == 1
                _series(
                    fig,
                    f"{method} ({'mean' if task == 'all' else task}){tag}",
                    [p.rho for p in ps],
                    [p.accuracy for p in ps],
                    "solid" if mean else dash,
                    3 if mean else 1.5,
                    method,
                )
    fig.add_vline(x=0.5, line_dash="dash", line_color="gray", annotation_text="ρ = 0.5")
    return fig


def scaling_figure(points):
    fig = _figure("Accuracy against the number of votes M (mean over datasets)", "M")
    for key in sorted({(p.ensemble, p.strength, p.k, p.label) for p in points}):
        for method in ("MAJ", "RRMaj"):
            ps = sorted(
                (
                    p
                    for p in points
                    if (p.ensemble, p.strength, p.k, p.label) == key
                    and p.task == "all"
                    and p.method == method
                ),
                key=lambda p: p.m,
            )
            _series(
                fig,
                f"{method} {key[3]} ({key[1]}, K={key[2]})",
                [p.m for p in ps],
                [p.mean for p in ps],
                "solid" if method == "RRMaj" else "dash",
            )
    return fig


def k_figure(points):
    fig = _figure("RRMaj accuracy against the chunk size K", "K (tokens per turn)")
    fig.update_xaxes(type="log")
    for key in sorted({(p.ensemble, p.strength, p.label, p.task) for p in points}):
        ps = sorted(
            (p for p in points if (p.ensemble, p.strength, p.label, p.task) == key),
            key=lambda p: p.k,
        )
        _series(
            fig,
            f"{key[3] if key[3] != 'all' else 'AVG'} {key[2]} ({key[1]})",
            [p.k for p in ps],
            [p.rrmaj for p in ps],
            "solid" if key[3] == "all" else "dot",
        )
    return fig


def write_png(fig, path: Path) -> str:
    """Write a PNG with kaleido (system chromium), else matplotlib; returns which one, or why none."""
    if not os.environ.get("BROWSER_PATH"):
        browser = (
            shutil.which("chromium")
            or shutil.which("chromium-browser")
            or shutil.which("google-chrome")
        )
        if browser:
            os.environ["BROWSER_PATH"] = (
                browser  # kaleido 1.x finds the browser through this variable
            )
    try:
        fig.write_image(str(path), scale=2)
        return "kaleido"
    except Exception as exc:  # noqa: BLE001 - any failure of the headless browser falls back
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    try:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        return f"no PNG (kaleido failed: {reason}; matplotlib is not installed)"
    figure, ax = plt.subplots(figsize=(9, 5.2))
    for trace in fig.data:
        ax.plot(
            list(trace.x),
            list(trace.y),
            label=trace.name,
            linestyle="--" if trace.line.dash != "solid" else "-",
        )
    ax.set_ylim(0, 100)
    ax.set_title(fig.layout.title.text)
    ax.legend(fontsize=7)
    figure.savefig(path, dpi=150)
    plt.close(figure)
    return "matplotlib"


# -- the report ---------------------------------------------------------------------------------
@dataclass
class Report:
    files: dict[str, str]  # file name -> text content (tables, markdown)
    figures: dict[str, Any]  # file stem -> plotly figure
    main_rows: list[MainRow]


def build_report(run: Run, seed: int = 0) -> Report:
    """Every analysis of the run, formatted; nothing is written."""
    from rrdemo import adversary_report as adv  # noqa: PLC0415

    outcomes = adv.primary_outcomes(run.outcomes)  # one strategy; all of them in their own table
    rows = main_table(outcomes, seed=seed)
    scaling = m_scaling(outcomes, seed=seed)
    speaker = final_speaker(outcomes, mixed_only=True)
    mix = speaker_mix(outcomes)
    kpoints = k_ablation(rows)
    yields = asymmetric_yield(rows)
    rho = rho_curve(rows)
    files = {"main_table.md": main_table_md(rows), "main_table.csv": main_table_csv(rows)}
    files["m_scaling.md"], files["m_scaling.csv"] = _scaling_tables(scaling)
    files["final_speaker.md"], files["final_speaker.csv"] = _speaker_tables(speaker)
    files["speaker_mix.md"], files["speaker_mix.csv"] = _mix_tables(mix)
    files["k_ablation.md"], files["k_ablation.csv"] = _k_tables(kpoints)
    files["asymmetric_yield.md"], files["asymmetric_yield.csv"] = _yield_tables(yields)
    files.update(paper_beside_files(rows, scaling, speaker, kpoints))
    by_strategy = adv.strategies(run.outcomes)
    if by_strategy != ["static"]:
        pairs = adv.main_table_by_adversary(run.outcomes, seed=seed)
        files["adversary_table.md"] = adv.adversary_table_md(pairs)
        files["adversary_table.csv"] = adv.adversary_table_csv(pairs)
    figures = {"rho": rho_figure(rho), "m_scaling": scaling_figure(scaling)}
    if len({p.k for p in kpoints}) > 1:
        figures["k_ablation"] = k_figure(kpoints)
    sweep = run.header.get("sweep", {})
    n_q = {c["task"]: len(c.get("questions", [])) for c in run.conditions.values()}
    summary = [
        f"# Experiment report: `{run.path.name}`",
        "",
        f"{run.units} finished (condition, question) units; questions per dataset: "
        + ", ".join(f"{t} {n}" for t, n in sorted(n_q.items()))
        + f". Sampling: temperature {sweep.get('temperature')}, top-p {sweep.get('top_p')}, seed {sweep.get('seed')}.",
        "Accuracies in %, [95% bootstrap interval over questions and pool draws]; "
        "± is the spread over 50 pool-sampling trials.",
        "",
        "## Main table (Ceiling | MAJ, RRMaj, Δ per config | Floor)\n\n" + files["main_table.md"],
        *(
            [
                f"## Adversary strategies (MAJ vs RRMaj per strategy; the other sections read "
                f"{by_strategy[0]})\n\n" + files["adversary_table.md"]
            ]
            if "adversary_table.md" in files
            else []
        ),
        "## Asymmetric yield\n\n" + files["asymmetric_yield.md"],
        "## M scaling\n\n" + files["m_scaling.md"],
        "## Who wrote the RR trajectories (mixed = an honest and a corrupted agent both wrote; "
        "accuracy per trajectory)\n\n" + files["speaker_mix.md"],
        "## Final speaker (mixed RR trajectories only, Fisher's exact test, two-sided)\n\n"
        "Only trajectories that both roles wrote are tested: in a single-role trajectory the last "
        "speaker's role is fixed by who wrote at all.\n\n" + files["final_speaker.md"],
        "## K ablation\n\n"
        + (
            files["k_ablation.md"]
            if "k_ablation" in figures
            else f"This run used one K ({', '.join(sorted({str(p.k) for p in kpoints}))}); "
            "sweep several K values (e.g. --k 10,30,75,150,300,500) for the ablation."
        ),
        "## The paper beside this run\n\n" + files["paper_beside.md"],
        "## Figures\n\n" + "\n".join(f"- [{s}]({s}.html) ![{s}]({s}.png)" for s in figures),
    ]
    files["report.md"] = "\n\n".join(summary) + "\n"
    return Report(files, figures, rows)


def paper_beside_files(
    rows: list[MainRow],
    scaling: list[ScalingPoint],
    speaker: list[SpeakerRow],
    kpoints: list[KPoint],
) -> dict[str, str]:
    """The paper's tables beside this run's analyses (rrdemo/paper): markdown and CSV (in %)."""
    tables = run_beside(rows, scaling, speaker, kpoints)
    markdown = "\n\n".join([INTRO, *(beside_markdown(t) for t in tables)])
    return {"paper_beside.md": markdown, "paper_beside.csv": beside_csv(tables)}


def write_report(
    log_path: Path | str, out_dir: Path | str | None = None, png: bool = True
) -> list[Path]:
    """Write the report of a log into `out_dir` (default: `<log>_report/` beside it)."""
    run = read_run(log_path)
    report = build_report(run)
    out = Path(out_dir) if out_dir else run.path.with_name(run.path.stem + "_report")
    if out.exists() and not out.is_dir():
        raise RRError(f"--out {out} exists and is not a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".report-") as tmp:
        for name, text in report.files.items():
            (Path(tmp) / name).write_text(text.rstrip("\n") + "\n", encoding="utf-8")
        notes = []
        for stem, fig in report.figures.items():
            fig.write_html(str(Path(tmp) / f"{stem}.html"), include_plotlyjs="cdn")
            if png:
                notes.append(f"{stem}.png: {write_png(fig, Path(tmp) / f'{stem}.png')}")
        (Path(tmp) / "figures.txt").write_text("\n".join(notes) + "\n", encoding="utf-8")
        out.mkdir(exist_ok=True)
        for item in sorted(Path(tmp).iterdir()):
            os.replace(item, out / item.name)
            written.append(out / item.name)
    return written
