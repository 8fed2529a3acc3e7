"""The paper's per-setting numbers beside a run's conditions: the main tables, the 3c2t
breakdown, the K ablation and the heterogeneous ensembles. Pure functions, rows in, rows out."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rrdemo.config import Composition
from rrdemo.events import METHODS
from rrdemo.report.paper import tables as paper
from rrdemo.report.paper.beside import (
    EMPTY,
    PAPER,
    RUN,
    BesideRow,
    BesideTable,
    corrupted_count,
    is_heterogeneous,
    make_table,
    model_note,
    percent,
)
from rrdemo.report.paper.main_tables import MAIN_LABELS, main_lines
from rrdemo.report.tables import MainRow


# -- per setting: heterogeneous ensembles, and the run's conditions (the Experiments tab) ------------
@dataclass(frozen=True)
class SettingResult(Composition):
    """One condition of a run at its M: accuracies as fractions (the main table's cells, or the
    Experiments tab's decisions)."""

    ensemble: str
    task: str
    strength: str
    k: int
    n: int
    c: int
    maj: float
    rrmaj: float


def settings_from_main(rows: Sequence[MainRow]) -> list[SettingResult]:
    """Every cell of the main table (Ceiling and Floor included) as a SettingResult."""
    out = []
    for row in rows:
        for cell in (row.ceiling, *row.cells, row.floor):
            if cell is not None:
                out.append(
                    SettingResult(
                        row.ensemble,
                        row.task,
                        row.strength,
                        row.k,
                        row.n,
                        cell.c,
                        cell.maj.mean,
                        cell.rrmaj.mean,
                    )
                )
    return out


VOTE_COLUMNS = (*METHODS, "Δ")


def hetero_beside(
    results: Sequence[SettingResult], weights: Mapping[str, str] = EMPTY
) -> BesideTable:
    """tab:app_hetero_n3/n5/diverse beside the run's heterogeneous ensembles, matched on N, the
    config and the strength (the paper's are strong); the run's values are its mean over its
    datasets, the paper's over GSM8K, Logic3 and Track3."""
    groups: dict[tuple, list[SettingResult]] = defaultdict(list)
    for r in results:
        if is_heterogeneous(r.ensemble) and r.strength == "strong":
            groups[(r.n, r.label)].append(r)
    rows = []
    for n, config in sorted(groups, key=lambda g: (g[0], corrupted_count(g[1]))):
        key = (str(n), config)
        printed = [h for h in paper.HETERO if (h.n, h.config) == (n, config)]
        if not printed:
            continue
        for h in printed:
            rows.append(
                BesideRow(key, PAPER, f"{h.ensemble}: {h.pattern}", (h.maj, h.rrmaj, h.gain))
            )
        by_ensemble: dict[tuple[str, int], list[SettingResult]] = defaultdict(list)
        for r in groups[(n, config)]:
            by_ensemble[(r.ensemble, r.k)].append(r)
        for (ensemble, k), members in sorted(by_ensemble.items()):
            maj = sum(r.maj for r in members) / len(members)
            rrmaj = sum(r.rrmaj for r in members) / len(members)
            tasks = ", ".join(sorted(r.task for r in members))
            values = (percent(maj), percent(rrmaj), percent(rrmaj - maj))
            rows.append(BesideRow(key, RUN, f"{ensemble}, K={k} (mean over {tasks})", values))
    if rows:
        ensembles = {r.ensemble for r in results if is_heterogeneous(r.ensemble)}
        note = model_note(ensembles, ["Llama-3.3-70B", "Llama-3-8B"], weights) + (
            " The paper's seats are 70B anchors (Llama-3.3-70B) and 8B models (Llama-3-8B); "
            "which of them are corrupted is in each paper line."
        )
    else:
        note = (
            "This run has no heterogeneous ensemble under the strong injection with N and c "
            "of the paper's (N = 3, 5, 7; the configs of tab:app_hetero_*). Build one seat by "
            "seat, e.g. `rrdemo experiment --ensemble gemma3-270m*,gemma3-270m*,gemma3-270m*,"
            "smollm2,smollm2 --strengths strong` (big models corrupted, small ones honest)."
        )
    return make_table(
        "heterogeneous",
        "Heterogeneous ensembles (mean over datasets)",
        (paper.LABELS["hetero_n3"], paper.LABELS["hetero_n5"], paper.LABELS["hetero_diverse"]),
        ("N", "config"),
        VOTE_COLUMNS,
        rows,
        f"strong injection, mean over {paper.HETERO_DATASETS}; 70B = Llama-3.3-70B, "
        "8B = Llama-3-8B",
        note,
    )


def _paper_lines_for(result: SettingResult, sources: Sequence[str]) -> list[BesideRow]:
    """The paper's lines for one condition of a run, from the tables named in `sources`."""
    key = (result.task, result.label, result.strength)
    rows = []
    if "main" in sources and result.n == 5 and result.strength in MAIN_LABELS:
        for line in main_lines(result.strength):
            if line.dataset != result.task:
                continue
            who = f"{line.model} (K=100, M=5)"
            if result.c in (0, 5):  # Ceiling / Floor: the paper prints one number
                value = line.ceiling if result.c == 0 else line.floor
                rows.append(BesideRow(key, PAPER, who, (value, None, None)))
            else:
                i = result.c - 1
                rows.append(BesideRow(key, PAPER, who, (line.maj[i], line.rrmaj[i], line.delta[i])))
    if "scaling_3c2t" in sources and (result.label, result.strength) == ("3c2t", "strong"):
        for r in paper.SCALING_3C2T:
            if r.dataset == result.task:
                for m, maj, rr in ((1, r.maj_m1, r.rrmaj_m1), (40, r.maj_m40, r.rrmaj_m40)):
                    rows.append(BesideRow(key, PAPER, f"model not named (M={m})", (maj, rr, None)))
    if "k" in sources and result.label == "2c1t":
        for r in paper.K_ABLATION:
            if (r.dataset, r.k) == (result.task, result.k):
                who = f"{paper.K_ABLATION_MODEL} (K={r.k}, N=M=3)"
                rows.append(BesideRow(key, PAPER, who, (None, r.rrmaj, None)))
    return rows


# Which paper tables `settings_beside` draws on: labels, what their numbers are, what they hold.
SOURCES: dict[str, tuple[tuple[str, ...], str, str]] = {
    "main": (
        tuple(MAIN_LABELS.values()),
        "the main tables (5 models, N = 5, K = 100, M = 5, 128 questions)",
        "0c5t ... 5c0t (N = 5) under both strengths",
    ),
    "scaling_3c2t": (
        (paper.LABELS["scaling_3c2t"],),
        "the 3c2t breakdown (model not named, M = 1 and 40)",
        "3c2t under the strong injection",
    ),
    "k": (
        (paper.LABELS["k_ablation"],),
        "the K ablation (Llama-3-8B, N = M = 3)",
        "2c1t at K = 10, 30, 75, 150, 300, 500",
    ),
}
PAPER_SOURCES = tuple(SOURCES)


def settings_beside(
    results: Sequence[SettingResult],
    sources: Sequence[str] = PAPER_SOURCES,
    weights: Mapping[str, str] = EMPTY,
) -> BesideTable:
    """Each condition of a run (dataset, config, strength) beside the paper's lines for it: the
    main tables (N = 5; 5 models), the 3c2t per-dataset breakdown (M = 1 and 40) and the K
    ablation (2c1t at the same K). Conditions the paper has nothing for are left out."""
    rows = []
    for r in sorted(results, key=lambda r: (r.task, r.strength, r.n, r.c, r.ensemble, r.k)):
        printed = _paper_lines_for(r, sources)
        if printed:
            values = (percent(r.maj), percent(r.rrmaj), percent(r.rrmaj - r.maj))
            rows.append(BesideRow(printed[0].key, RUN, f"{r.ensemble}, K={r.k}", values))
            rows.extend(printed)
    ensembles = {r.ensemble for r in results}
    if rows:
        models = sorted({row.who.split(" (")[0] for row in rows if row.source == PAPER})
        named = [m for m in models if m in paper.MODEL_IDS]
        note = model_note(ensembles, named or None, weights)
        ks = sorted({r.k for r in results})
        if "main" in sources and ks != [100]:
            shown = ", ".join(str(k) for k in ks)
            note += f" The paper's main tables use K = 100 and M = 5; this run K = {shown}."
    else:
        has = "; ".join(SOURCES[source][2] for source in sources)
        note = f"No condition of this run is in these paper tables (they have {has})."
    labels = tuple(label for source in sources for label in SOURCES[source][0])
    return make_table(
        "settings",
        "Accuracy per setting: this run and the paper",
        labels,
        ("dataset", "config", "strength"),
        VOTE_COLUMNS,
        rows,
        "; ".join(SOURCES[source][1] for source in sources),
        note,
    )
