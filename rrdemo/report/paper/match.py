"""The paper's M-scaling, final-speaker and K-ablation tables beside a run's analyses: pure
functions, `rrdemo.report` rows in, `BesideTable`s out (matched on the keys each table has)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence

from rrdemo.events import METHODS
from rrdemo.report.paper import tables as paper
from rrdemo.report.paper.beside import (
    EMPTY,
    PAPER,
    RUN,
    BesideRow,
    BesideTable,
    corrupted_count,
    make_table,
    model_note,
    no_match_note,
    pct_at,
    percent,
    rho_text,
)
from rrdemo.report.paper.settings import hetero_beside, settings_beside, settings_from_main
from rrdemo.report.speakers import FinalSpeakerRow
from rrdemo.report.tables import KPoint, MainRow, ScalingPoint


# -- M scaling ----------------------------------------------------------------------------------
def scaling_beside(
    points: Sequence[ScalingPoint], weights: Mapping[str, str] = EMPTY
) -> BesideTable:
    """tab:app_ablation_scaling beside the run's M scaling (mean over its datasets), matched on
    strength, config and method; columns are the paper's M values and the run's."""
    run: dict[tuple[str, str, str], dict[tuple[str, int], dict[int, float]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for p in points:
        if p.task == "all":
            run[(p.strength, p.label, p.method)][(p.ensemble, p.k)][p.m] = p.mean
    matched = [r for r in paper.SCALING if (r.strength, r.config, r.method) in run]
    ms = sorted(
        set(paper.SCALING_MS)
        | {
            m
            for r in matched
            for runs in run[(r.strength, r.config, r.method)].values()
            for m in runs
        }
    )
    rows = []
    for r in matched:
        key = (r.config, r.strength, r.method)
        by_m = dict(zip(paper.SCALING_MS, r.mean, strict=True))
        rows.append(BesideRow(key, PAPER, "model not named", tuple(by_m.get(m) for m in ms)))
        for (ensemble, k), values in sorted(run[(r.strength, r.config, r.method)].items()):
            rows.append(BesideRow(key, RUN, f"{ensemble}, K={k}", tuple(pct_at(values, ms))))
    ensembles = {p.ensemble for p in points}
    if rows:
        note = model_note(ensembles, None, weights) + " The run's mean is over its own datasets."
    else:
        note = no_match_note(
            "3c2t and 4c1t (strong and moderate) at M = 1, 5, 10, 20, 30, 40, drawn from pools"
            " of M* = 50 trajectories",
            {f"{p.label} ({p.strength})" for p in points},
            "--configs 3c2t,4c1t --strengths strong,moderate --m-star 50",
        )
    return make_table(
        "m_scaling",
        "M scaling, mean over datasets (MAJ, RRMaj, Δ = RRMaj − MAJ)",
        (paper.LABELS["scaling"],),
        ("config", "strength", "method"),
        tuple(f"M={m}" for m in ms),
        rows,
        "mean over the paper's 6 datasets, 50 bootstrap trials from pools of M* = 50 runs",
        note,
    )


def scaling_3c2t_beside(
    points: Sequence[ScalingPoint], weights: Mapping[str, str] = EMPTY
) -> BesideTable:
    """tab:app_ablation_per_dataset (3c2t, strong, M = 1 and 40) beside the run's 3c2t strong
    M scaling per dataset (and its mean over datasets beside the paper's Average line)."""
    run: dict[tuple[str, str], dict[tuple[str, int], dict[int, float]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for p in points:
        if p.label == "3c2t" and p.strength == "strong" and p.method in METHODS:
            run[(p.task, p.method)][(p.ensemble, p.k)][p.m] = p.mean
    ms = sorted({1, 40} | {m for runs in run.values() for values in runs.values() for m in values})
    rows = []
    for r in paper.SCALING_3C2T:
        for method, printed in (
            ("MAJ", (r.maj_m1, r.maj_m40)),
            ("RRMaj", (r.rrmaj_m1, r.rrmaj_m40)),
        ):
            if (r.dataset, method) not in run:
                continue
            key = (r.dataset, method)
            by_m = dict(zip((1, 40), printed, strict=True))
            rows.append(BesideRow(key, PAPER, "model not named", tuple(by_m.get(m) for m in ms)))
            for (ensemble, k), values in sorted(run[(r.dataset, method)].items()):
                rows.append(BesideRow(key, RUN, f"{ensemble}, K={k}", tuple(pct_at(values, ms))))
    ensembles = {p.ensemble for p in points}
    if rows:
        note = model_note(ensembles, None, weights)
    else:
        note = no_match_note(
            "3c2t under the strong injection on each dataset, at M = 1 and M = 40 (pools of"
            " M* = 50)",
            {f"{p.label} ({p.strength})" for p in points},
            "--configs 3c2t --strengths strong --m-star 50",
        )
    return make_table(
        "m_scaling_3c2t",
        "3c2t, strong injection, per dataset (dataset 'all' = the mean over datasets)",
        (paper.LABELS["scaling_3c2t"],),
        ("dataset", "method"),
        tuple(f"M={m}" for m in ms),
        rows,
        "3c2t under the strong (imperative) injection; the paper's Average is over 6 datasets",
        note,
    )


# -- final speaker ------------------------------------------------------------------------------
SPEAKER_COLUMNS = ("Clean-Last", "n clean", "Corrupt-Last", "n corrupt", "Δ", "p-value")


def speaker_beside(
    rows_in: Sequence[FinalSpeakerRow], weights: Mapping[str, str] = EMPTY
) -> BesideTable:
    """tab:app_last_speaker beside the run's final-speaker test, matched on the config (the
    paper pools every dataset and does not state the strength)."""
    by_config: dict[str, list[FinalSpeakerRow]] = defaultdict(list)
    for r in rows_in:
        by_config[r.label].append(r)
    rows = []
    for config in sorted({r.config for r in paper.FINAL_SPEAKER}, key=corrupted_count):
        if config not in by_config:
            continue
        key = (config, rho_text(config))
        for r in (r for r in paper.FINAL_SPEAKER if r.config == config):
            values = (r.clean_acc, r.clean_n, r.corrupt_acc, r.corrupt_n, r.delta, r.p_value)
            rows.append(BesideRow(key, PAPER, r.model, values))
        for s in by_config[config]:
            p = None if math.isnan(s.p_value) else s.p_value
            values = (
                percent(s.clean_acc),
                s.clean_n,
                percent(s.corrupt_acc),
                s.corrupt_n,
                percent(s.delta),
                p,
            )
            rows.append(BesideRow(key, RUN, f"{s.ensemble}, {s.strength}, K={s.k}", values))
    paper_models = list(dict.fromkeys(r.model for r in paper.FINAL_SPEAKER))
    if rows:
        note = model_note({r.ensemble for r in rows_in}, paper_models, weights)
    else:
        note = no_match_note(
            "1c4t, 2c3t, 3c2t and 4c1t (N = 5)",
            {r.label for r in rows_in},
            "--configs 1c4t,2c3t,3c2t,4c1t",
        )
    return make_table(
        "final_speaker",
        "Final speaker: RR trajectories ended by an honest (Clean-Last) or corrupted agent",
        (paper.LABELS["final_speaker"],),
        ("config", "rho"),
        SPEAKER_COLUMNS,
        rows,
        "every RR trajectory pooled over the 6 datasets, Fisher's exact test, two-sided",
        note,
        (2, 0, 2, 0, 2, 4),
    )


# -- K ablation ---------------------------------------------------------------------------------
def k_beside(points: Sequence[KPoint], weights: Mapping[str, str] = EMPTY) -> BesideTable:
    """tab:app_k_ablation (2c1t, RRMaj per K) beside the run's RRMaj per K, matched on the config
    and the dataset (the paper's AVG beside the run's mean over its datasets)."""
    run: dict[tuple[str, str], dict[tuple[str, str], dict[int, float]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for p in points:
        run[(p.label, p.task)][(p.ensemble, p.strength)][p.k] = p.rrmaj
    paper_ks = sorted({r.k for r in paper.K_ABLATION})
    matched = [d for d in paper.K_ABLATION_DATASETS if ("2c1t", d) in run]
    ks = sorted(set(paper_ks) | {k for d in matched for v in run[("2c1t", d)].values() for k in v})
    rows = []
    for dataset in matched:
        key = ("2c1t", dataset)
        printed = {r.k: r.rrmaj for r in paper.K_ABLATION if r.dataset == dataset}
        rows.append(
            BesideRow(key, PAPER, paper.K_ABLATION_MODEL, tuple(printed.get(k) for k in ks))
        )
        for (ensemble, strength), values in sorted(run[key].items()):
            rows.append(BesideRow(key, RUN, f"{ensemble}, {strength}", tuple(pct_at(values, ks))))
    if rows:
        note = model_note({p.ensemble for p in points}, [paper.K_ABLATION_MODEL], weights)
    else:
        note = no_match_note(
            "2c1t (N = M = 3, agent t mod N writes turn t, trajectories run to EOS with a 4,096"
            " token cap) on Logic7, Logic3 and Track7 at K = 10, 30, 75, 150, 300, 500",
            {p.label for p in points},
            "--configs 2c1t --tasks logic7,logic3,track7 --k 10,30,75,150,300,500"
            " --max-tokens 4096 --order fixed",
        )
    return make_table(
        "k_ablation",
        "K ablation: RRMaj accuracy per K (dataset 'all' = the mean over datasets)",
        (paper.LABELS["k_ablation"],),
        ("config", "dataset"),
        tuple(f"K={k}" for k in ks),
        rows,
        "Llama-3-8B, N = M = 3, 2 corrupted vs. 1 honest; the paper's AVG is over its 3 datasets",
        note,
    )


def run_beside(
    rows: Sequence[MainRow],
    scaling: Sequence[ScalingPoint],
    speaker: Sequence[FinalSpeakerRow],
    kpoints: Sequence[KPoint],
    weights: Mapping[str, str] = EMPTY,
) -> list[BesideTable]:
    """Every paper table beside a run's analyses (what `rrdemo report` shows); `weights` maps
    served models to the hub ids they serve, so a served paper model counts as the paper's."""
    settings = settings_from_main(rows)
    return [
        settings_beside(settings, ("main",), weights),
        scaling_beside(scaling, weights),
        scaling_3c2t_beside(scaling, weights),
        speaker_beside(speaker, weights),
        k_beside(kpoints, weights),
        hetero_beside(settings, weights),
    ]
