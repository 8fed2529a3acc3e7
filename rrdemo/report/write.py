"""Turn an experiment log into the paper's tables (markdown + CSV) and figures (plotly HTML + PNG).

    write_report("runs/small.jsonl", "runs/small_report")   -> the files written

The log is read (`rrdemo.runs.log.read_run`) and every analysis computed before anything is
written; the files are written into a temporary folder beside the output and then moved in, so a
bad log overwrites nothing. The tables are formatted by `rrdemo.report.render`, the figures drawn
by `rrdemo.report.figures`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rrdemo.errors import RRError
from rrdemo.events import METHODS
from rrdemo.report import adversary as adv
from rrdemo.report.figures import k_figure, rho_curve_figure, scaling_figure, write_folder
from rrdemo.report.hijacked import hijacked_tables
from rrdemo.report.lengths import answer_lengths, lengths_md
from rrdemo.report.models import served_weights
from rrdemo.report.paired import paired_tables
from rrdemo.report.paper.beside import INTRO, beside_csv, beside_markdown
from rrdemo.report.paper.match import run_beside
from rrdemo.report.policies import policy_tables
from rrdemo.report.render import (
    k_tables,
    main_table_csv,
    main_table_md,
    mix_tables,
    opener_tables,
    scaling_tables,
    speaker_tables,
    yield_tables,
)
from rrdemo.report.speakers import FinalSpeakerRow, final_speaker, openers, speaker_mix
from rrdemo.report.stats import BOOT
from rrdemo.report.tables import (
    KPoint,
    MainRow,
    ScalingPoint,
    asymmetric_yield,
    k_ablation,
    m_scaling,
    main_table,
    rho_curve,
)
from rrdemo.report.theory_fit import fit, fit_records, meter_steps, theory_fit_md
from rrdemo.runs.log import Run, read_log, read_run

PAIRED_TITLE = (
    "## MAJ and RRMaj as the run decided them (estimator: run's decisions, M = M*: accuracies, "
    f"paired difference with a bootstrap 95% interval over questions ({BOOT:,} resamples, seeded), "
    "McNemar's exact test, the smallest lead it detects with 80% power)\n\n"
)


@dataclass
class Report:
    files: dict[str, str]  # file name -> text content (tables, markdown)
    figures: dict[str, Any]  # file stem -> plotly figure
    main_rows: list[MainRow]


def build_report(run: Run, seed: int = 0) -> Report:
    """Every analysis of the run, formatted; nothing is written. A run that decoded one method
    (`methods` in its sweep) gets the analyses that read that method alone."""
    methods = run.header.get("sweep", {}).get("methods") or list(METHODS)
    if set(METHODS) <= set(methods):
        return _both_methods_report(run, seed)
    return _one_method_report(run, methods, seed)


def _both_methods_report(run: Run, seed: int) -> Report:
    """Every analysis of a run that decoded MAJ and RRMaj, formatted."""
    outcomes = adv.primary_outcomes(run.outcomes)  # one strategy; all of them in their own table
    rows = main_table(outcomes, seed=seed)
    scaling = m_scaling(outcomes, seed=seed)
    speaker = final_speaker(outcomes, mixed_only=True)
    mix = speaker_mix(outcomes)
    kpoints = k_ablation(rows)
    yields = asymmetric_yield(rows)
    rho = rho_curve(rows)
    files = {"main_table.md": main_table_md(rows), "main_table.csv": main_table_csv(rows)}
    files["m_scaling.md"], files["m_scaling.csv"] = scaling_tables(scaling)
    files["final_speaker.md"], files["final_speaker.csv"] = speaker_tables(speaker)
    files["speaker_mix.md"], files["speaker_mix.csv"] = mix_tables(mix)
    files["openers.md"], files["openers.csv"] = opener_tables(openers(outcomes))
    files["k_ablation.md"], files["k_ablation.csv"] = k_tables(kpoints)
    files["asymmetric_yield.md"], files["asymmetric_yield.csv"] = yield_tables(yields)
    weights = served_weights(c["config"] for c in run.conditions.values())
    files.update(paper_beside_files(rows, scaling, speaker, kpoints, weights))
    files["lengths.md"] = lengths_md(answer_lengths(outcomes))
    log = read_log(run.path)
    paired = paired_tables(log)
    files["hijacked.md"], files["hijacked.csv"] = hijacked_tables(log, _question_for(run))
    files["paired.md"], files["paired.csv"], files["answer_rates.md"], files["answer_rates.csv"] = (
        paired
    )
    if run.metered:  # the truth meter's readings: the theory's parameters (docs/theory.md)
        fits = fit(meter_steps(run.metered), seed=seed)
        files["theory_fit.md"] = theory_fit_md(fits, rows)
        files["theory_fit.json"] = json.dumps(fit_records(fits, rows), indent=1)
    by_strategy = adv.strategies(run.outcomes)
    if by_strategy != ["static"]:
        pairs = adv.main_table_by_adversary(run.outcomes, seed=seed)
        files["adversary_table.md"] = adv.adversary_table_md(pairs)
        files["adversary_table.csv"] = adv.adversary_table_csv(pairs)
    figures = {"rho": rho_curve_figure(rho), "m_scaling": scaling_figure(scaling)}
    if len({p.k for p in kpoints}) > 1:
        figures["k_ablation"] = k_figure(kpoints)
    summary = _both_methods_summary(run, files, figures, kpoints, by_strategy)
    files["report.md"] = "\n\n".join(summary) + "\n"
    return Report(files, figures, rows)


def _both_methods_summary(
    run: Run, files: dict[str, str], figures: dict, kpoints: list, by_strategy: list[str]
) -> list[str]:
    """The sections of a both-methods report.md, in order, from its files and figures."""
    return [
        *_head(run),
        "Accuracies in %. Two estimators, each named where it is shown: the run's decisions "
        "(each question's MAJ and RRMaj vote as the run cast it, at M = M*: the headline, the "
        "numbers of the leaderboard and the Arena) and the pool-draw estimate (the mean over 50 "
        "draws of M members from each question's pool, the paper's appendix D; [95% bootstrap "
        f"interval over questions and pool draws, {BOOT:,} resamples], ± the spread over the "
        "draws).",
        "",
        PAIRED_TITLE + files["paired.md"],
        "## Main table, pool-draw estimate (Ceiling | MAJ, RRMaj, Δ per config | Floor)\n\n"
        + files["main_table.md"],
        *(
            [
                "## Adversary strategies, pool-draw estimate (MAJ vs RRMaj per strategy; the "
                f"other sections read {by_strategy[0]})\n\n" + files["adversary_table.md"]
            ]
            if "adversary_table.md" in files
            else []
        ),
        "## What each answer was (MAJ: one agent's answer; RRMaj: one trajectory's)\n\n"
        + files["answer_rates.md"],
        "## Right work, wrong label (fooled answers whose text computes the gold's value: the "
        "reasoning held and the last statement gave the target; questions whose gold is one "
        "number)\n\n" + files["hijacked.md"],
        "## Asymmetric yield (pool-draw estimate: the main table's Δ)\n\n"
        + files["asymmetric_yield.md"],
        "## M scaling (pool-draw estimate at each M)\n\n" + files["m_scaling.md"],
        "## Who wrote the RR trajectories (mixed = an honest and a corrupted agent both wrote; "
        "accuracy per trajectory)\n\n" + files["speaker_mix.md"],
        "## Who opened the RR trajectories (per trajectory; a corrupted opener that no honest "
        "agent follows closes the text before any honest turn)\n\n" + files["openers.md"],
        "## Final speaker (mixed RR trajectories only, Fisher's exact test, two-sided)\n\n"
        "Only trajectories that both roles wrote are tested: in a single-role trajectory the last "
        "speaker's role is fixed by who wrote at all.\n\n" + files["final_speaker.md"],
        "## Lengths (tokens per MAJ answer and per RR trajectory; cut = stopped at L)\n\n"
        + files["lengths.md"],
        "## K ablation (pool-draw estimate)\n\n"
        + (
            files["k_ablation.md"]
            if "k_ablation" in figures
            else f"This run used one K ({', '.join(sorted({str(p.k) for p in kpoints}))}); "
            "sweep several K values for the ablation, with room for every agent's turn as in the "
            "paper's (--k 10,30,75,150,300,500 --max-tokens 4096 --order fixed)."
        ),
        "## The paper beside this run\n\n" + files["paper_beside.md"],
        *(
            [
                "## The theory, measured (truth meter; docs/theory.md)\n\n"
                "gamma_H, alpha and rho_max(K) fitted from the meter's readings: "
                "[theory_fit.md](theory_fit.md)."
            ]
            if "theory_fit.md" in files
            else []
        ),
        "## Figures\n\n" + "\n".join(f"- [{s}]({s}.html) ![{s}]({s}.png)" for s in figures),
    ]


def _one_method_report(run: Run, methods: list[str], seed: int) -> Report:
    """The report of a run that decoded one method: what each answer was, right work with a wrong
    label and, for RRMaj, who wrote, opened and ended its trajectories, their lengths and the
    meter. Nothing that sets MAJ against RRMaj: the log holds one of them (its comparison is the
    paired run's, `write_report(paired_with=...)`)."""
    outcomes = adv.primary_outcomes(run.outcomes)
    log = read_log(run.path)
    files: dict[str, str] = {}
    _, _, files["answer_rates.md"], files["answer_rates.csv"] = paired_tables(log)
    files["hijacked.md"], files["hijacked.csv"] = hijacked_tables(log, _question_for(run))
    files["lengths.md"] = lengths_md(answer_lengths(outcomes))
    rr = "RRMaj" in methods
    if rr:
        files["speaker_mix.md"], files["speaker_mix.csv"] = mix_tables(speaker_mix(outcomes))
        files["openers.md"], files["openers.csv"] = opener_tables(openers(outcomes))
        speaker = final_speaker(outcomes, mixed_only=True)
        files["final_speaker.md"], files["final_speaker.csv"] = speaker_tables(speaker)
    if run.metered:
        fits = fit(meter_steps(run.metered), seed=seed)
        files["theory_fit.md"] = theory_fit_md(fits, [])
        files["theory_fit.json"] = json.dumps(fit_records(fits, []), indent=1)
    summary = [
        *_head(run),
        f"**This run decoded {' and '.join(methods)} alone** (`methods` in its sweep), so it "
        "has no table that sets MAJ against RRMaj: the main table, the paired differences, M "
        "scaling, the K ablation and the paper beside it need both. Those comparisons are made "
        "against the run it varies, in the paired section at the end when the report is "
        "written with one (`rrdemo report LOG --paired-with BASE`).",
        "## What each answer was\n\n" + files["answer_rates.md"],
        "## Right work, wrong label (fooled answers whose text computes the gold's value: the "
        "reasoning held and the last statement gave the target; questions whose gold is one "
        "number)\n\n" + files["hijacked.md"],
        *(
            [
                "## Who wrote the RR trajectories (mixed = an honest and a corrupted agent both "
                "wrote; accuracy per trajectory)\n\n" + files["speaker_mix.md"],
                "## Who opened the RR trajectories (per trajectory; a corrupted opener that no "
                "honest agent follows closes the text before any honest turn)\n\n"
                + files["openers.md"],
                "## Final speaker (mixed RR trajectories only, Fisher's exact test, two-sided)"
                "\n\n" + files["final_speaker.md"],
            ]
            if rr
            else []
        ),
        "## Lengths (tokens per answer or trajectory; cut = stopped at L)\n\n"
        + files["lengths.md"],
        *(
            [
                "## The theory, measured (truth meter; docs/theory.md)\n\n[theory_fit.md](theory_fit.md)."
            ]
            if "theory_fit.md" in files
            else []
        ),
    ]
    files["report.md"] = "\n\n".join(summary) + "\n"
    return Report(files, {}, [])


def _head(run: Run) -> list[str]:
    """The report's title and what the run holds (units, questions, sampling)."""
    sweep = run.header.get("sweep", {})
    return [
        f"# Experiment report: `{run.path.name}`",
        "",
        f"{run.units} finished (condition, question) units; questions per dataset: "
        + questions_text(run.conditions.values())
        + f". Sampling: temperature {sweep.get('temperature')}, top-p {sweep.get('top_p')}, "
        f"seed {sweep.get('seed')}.",
    ]


def _question_for(run: Run):
    """(task, question id) -> the question, from the run's data source; None where it is not
    there (a custom or a missing question)."""
    from rrdemo.runs.reextract import questions_by_id

    source = run.header.get("sweep", {}).get("source") or "auto"

    def question_for(task: str, qid: str):
        try:
            return questions_by_id(task, source).get(qid)
        except RRError:
            return None

    return question_for


def paper_beside_files(
    rows: list[MainRow],
    scaling: list[ScalingPoint],
    speaker: list[FinalSpeakerRow],
    kpoints: list[KPoint],
    weights: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The paper's tables beside this run's analyses (rrdemo/paper): markdown and CSV (in %);
    `weights` maps served models to the hub ids they serve (`served_weights`)."""
    tables = run_beside(rows, scaling, speaker, kpoints, weights or {})
    markdown = "\n\n".join([INTRO, *(beside_markdown(t) for t in tables)])
    return {"paper_beside.md": markdown, "paper_beside.csv": beside_csv(tables)}


def write_report(
    log_path: Path | str,
    out_dir: Path | str | None = None,
    png: bool = True,
    paired_with: Path | str | None = None,
) -> list[Path]:
    """Write the report of a log into `out_dir` (default: `<log>_report/` beside it);
    `paired_with`: the run this one varies (its RRMaj paired with that run's MAJ and RRMaj on the
    same questions, `rrdemo.report.policies`), in policies.md / .csv and the report's text."""
    run = read_run(log_path)
    report = build_report(run)
    if paired_with is not None:
        md, csv = policy_tables(read_log(paired_with), read_log(run.path))
        report.files["policies.md"], report.files["policies.csv"] = md, csv
        report.files["report.md"] += (
            f"\n## Paired with `{Path(paired_with).name}` (this run's RRMaj against that run's "
            f"MAJ and RRMaj on the same questions; bootstrap 95% interval, {BOOT:,} resamples, "
            "McNemar's exact p)\n\n" + md
        )
    out = Path(out_dir) if out_dir else run.path.with_name(run.path.stem + "_report")
    if out.exists() and not out.is_dir():
        raise RRError(f"--out {out} exists and is not a folder")
    return write_folder(out, report.files, report.figures, png, ".report-")


def questions_text(conditions) -> str:
    """Each task's planned questions, and per config where configs plan different counts
    (`n_by_config`): "arith2 80 (3c2t 80; 0c5t, 1c4t 40)"."""
    parts = []
    for task in sorted({c["task"] for c in conditions}):
        mine = [c for c in conditions if c["task"] == task]
        total = len({q for c in mine for q in c.get("questions", [])})
        counts: dict[int, list[str]] = {}
        for c in mine:
            labels = counts.setdefault(len(c.get("questions", [])), [])
            if c["label"] not in labels:
                labels.append(c["label"])
        detail = (
            " ("
            + "; ".join(f"{', '.join(v)} {n}" for n, v in sorted(counts.items(), reverse=True))
            + ")"
            if len(counts) > 1
            else ""
        )
        parts.append(f"{task} {total}{detail}")
    return ", ".join(parts)
