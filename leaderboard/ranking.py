"""Scores for the board: pure functions, rows in, numbers out (no database, no UI).

Definitions (Delta = RRMaj accuracy - MAJ accuracy of one configuration; rho = c / N; the bands
are `rrdemo.config.Composition.band`):
- majority corruption: 0.6 <= rho < 1 (the paper's 3c2t and 4c1t for N = 5);
- minority corruption: 0 < rho <= 0.4 (1c4t and 2c3t). The Ceiling (rho = 0) and the Floor
  (rho = 1) are bounds, not comparisons, and count in neither band (appendix C's example,
  Llama-4-Scout-17B on GSM8K: tax -1.55 = mean(+0.6, -3.7), rescue +49.1 = mean(+69.9, +28.3));
- rrmaj_majority / maj_majority: mean RRMaj / MAJ accuracy over the majority-corruption rows;
- mean_gain: mean Delta over the majority-corruption rows (the "rescue gain");
- robustness_tax: mean Delta over the minority-corruption rows (negative = a cost);
- asymmetric_yield: mean_gain + robustness_tax, the net benefit of RRMaj when the safe and the
  compromised regime are weighed equally ("comparing the average Delta when the system is
  inherently safe against the average Delta when it is compromised ... the net benefit is
  positive", appendix C).
Intervals carry the sampling of the questions behind each row, never a resampling of the rows
(which would read the spread between datasets as uncertainty). Where every averaged row carries
its paired counts (`maj_only`, `rrmaj_only`: a row of the run's decisions), RRMaj's accuracy gets
an interval that resamples each row's questions on their own, paired
(`rrdemo.report.pooled.resampled`, `BOOT` resamples, seeded), and RRMaj - MAJ is not averaged
over rows at all: it is one pooled line per model and config (`pooled_lines`), the stratified
paired bootstrap of the evidence pool over the rows of independent runs, each question counted
once, seeded as the pool report seeds it (`rrdemo.report.pooled.pool_seed`; a line of one row as
its run's paired table), so a model's line at 3c2t is the README's pooled row number for number.
Where a row lacks the counts (the paper's tables print accuracies only), the board gives RRMaj's
accuracy the interval its stated number of questions allows (a binomial over them) and the
Delta-based scores, the paper's means, none. `ModelScore.intervals` says which.

Rows of the run's decisions on the same model, task, config and injection may stand on the same
questions (a run repeated under another end-of-sequence policy on the first questions of an
earlier one, like `evidence_pass`); the board does not store which questions a row stands on, so
it counts the one with the most questions (the earlier submission on a tie) and leaves the others
out of every average and pool (`independent`), shown in the row table and named where they are
left out.

Only current rows are ranked (`BoardRow.ranked`): a superseded row, a row on fewer than
`MIN_QUESTIONS` questions and a row that does not state its estimator are shown, labelled, and
never averaged. Models whose scores agree to the 0.1 point the board shows share a rank, written
"=2" (`rank_labels`).

The generated tasks (arith1..arith12, beyond the paper) are ranked apart: a model's rows on them
get a score and a rank of their own, after the paper's, and never enter a paper-task average, so
a sweep on a task the paper did not run cannot move a model's standing on the paper's six. The
chart draws them as their own lines for the same reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from statistics import fmean

import numpy as np

from leaderboard.columns import BoardRow
from rrdemo.report.paired import condition_seed
from rrdemo.report.pooled import (
    PairCounts,
    PairedEstimate,
    paired_counts_estimate,
    pool_seed,
    resampled,
)
from rrdemo.report.stats import BOOT, interval95
from rrdemo.tasks.generated import BEYOND_THE_PAPER
from rrdemo.voting import derive_seed

# The two task families a ranking keeps apart (`ModelScore.tasks`), the paper's first
TASK_FAMILIES = ("the paper's tasks", BEYOND_THE_PAPER)

# The board's rho filter: its choices, and the band (`rrdemo.config.Composition.band`) of each
RHO_BANDS = ("all", "minority (rho <= 0.4)", "majority (rho >= 0.6)", "bounds (rho = 0 or 1)")
_BAND_OF_CHOICE = dict(zip(RHO_BANDS[1:], ("minority", "majority", "bound"), strict=True))


def in_band(row: BoardRow, band: str) -> bool:
    """Whether `row` falls in one of `RHO_BANDS`."""
    return band not in _BAND_OF_CHOICE or row.band == _BAND_OF_CHOICE[band]


def filter_rows(
    rows: Iterable[BoardRow],
    *,
    dataset: str | None = None,
    strength: str | None = None,
    rho_band: str | None = None,
    source: str | None = None,
    config: str | None = None,
    model: str | None = None,
    superseded: bool = False,
) -> list[BoardRow]:
    """Rows matching every given filter (None or "all" means no filter on that field); `config`
    is the paper's `3c2t` label, `model` a model name as the board shows it. Superseded rows
    only with `superseded`."""
    given = {
        "dataset": dataset,
        "strength": strength,
        "source": source,
        "label": config,
        "model": model,
    }
    wanted = {name: value for name, value in given.items() if value not in (None, "all")}
    return [
        row
        for row in rows
        if all(getattr(row, name) == value for name, value in wanted.items())
        and (rho_band in (None, "all") or in_band(row, rho_band))
        and (superseded or not row.superseded)
    ]


@dataclass(frozen=True)
class Interval:
    """A [lo, hi] bootstrap interval."""

    lo: float
    hi: float


@dataclass(frozen=True)
class ModelScore:
    """Per-model summary; None where the rows do not allow the number."""

    model: str
    n_majority_rows: int
    n_minority_rows: int
    rrmaj_majority: float | None
    maj_majority: float | None
    mean_gain: float | None
    robustness_tax: float | None
    asymmetric_yield: float | None
    rrmaj_majority_ci: Interval | None = None
    tasks: str = TASK_FAMILIES[0]  # which rows were averaged: the paper's tasks or the generated
    # the prompt styles and end-of-sequence policies of the averaged rows (None: a row that does
    # not state it), so a score says what runs it pools
    prompt_styles: tuple[str | None, ...] = ()
    eos_policies: tuple[str | None, ...] = ()
    sources: tuple[str, ...] = ()  # where the averaged rows come from: paper, rrdemo, ...
    estimators: tuple[str | None, ...] = ()  # how their accuracies were computed
    questions: int = 0  # the fewest questions one averaged row stands on
    intervals: str = ""  # what the intervals resample (`INTERVALS`); "" when there are none
    left_out: tuple[str, ...] = ()  # rows not averaged, each with why (`independent`)


# What a score's intervals carry (`ModelScore.intervals`)
INTERVALS = {
    "paired": (
        f"RRMaj: each row's questions resampled, paired ({BOOT:,} resamples); Delta: not averaged "
        "over rows, pooled per config (the pooled lines)"
    ),
    "stated n": "RRMaj: a binomial over each row's stated questions; Delta: none (no paired counts)",
}


def task_family(row: BoardRow) -> str:
    """The family of `TASK_FAMILIES` a row is ranked in."""
    return TASK_FAMILIES[1] if row.beyond_the_paper else TASK_FAMILIES[0]


def _stated(rows: Iterable[BoardRow], name: str) -> tuple[str | None, ...]:
    """The values of setting `name` among `rows`, sorted, None (not stated) last."""
    return tuple(sorted({getattr(r, name) for r in rows}, key=lambda v: (v is None, v or "")))


def _mean(values: Sequence[float]) -> float | None:
    return fmean(values) if values else None


def row_counts(row: BoardRow) -> PairCounts | None:
    """A row's questions by outcome pair, from its accuracies and paired counts; None without."""
    b, c = row.maj_only, row.rrmaj_only
    if b is None or c is None or row.maj_accuracy is None or row.rrmaj_accuracy is None:
        return None
    n = row.n_questions
    both = round(row.maj_accuracy * n) - b
    return PairCounts(both, b, c, n - both - b - c)


def shares_with(row: BoardRow, other: BoardRow) -> str:
    """Why `row` is left out of the averages and pools that count `other` (`independent`)."""
    return (
        f"{row.dataset} {row.label} of submission #{row.submission_id}: may stand on the "
        f"questions of submission #{other.submission_id} (same model, task, config and injection)"
    )


def independent(rows: Sequence[BoardRow]) -> tuple[list[BoardRow], list[str]]:
    """`rows` less the rows of the run's decisions that may share questions with another (same
    model, task, config and injection: the most questions kept, then the earliest submission),
    in their order; and why each left-out row is (`shares_with`). Rows without paired counts are
    all kept: the paper's tables hold one row per model, task, config and injection."""
    first: dict[tuple, BoardRow] = {}
    why: dict[int, str] = {}
    for row in sorted(rows, key=lambda r: (-r.n_questions, r.submission_id)):
        if row_counts(row) is None:
            continue
        key = (row.model, row.dataset, row.label, row.strength)
        if key in first:
            why[id(row)] = shares_with(row, first[key])
        else:
            first[key] = row
    return [r for r in rows if id(r) not in why], [why[id(r)] for r in rows if id(r) in why]


def pooled_line(rows: Sequence[BoardRow], seed: int | None = None) -> PairedEstimate | None:
    """RRMaj - MAJ over the rows' questions, each counted once, the questions of each row
    resampled on their own (`rrdemo.report.pooled.paired_counts_estimate`); None when a row
    lacks its paired counts. Seeded (unless `seed`) as the report seeds the same counts: several
    rows by `pool_seed` of their config and counts (the pool report's), one row by its
    condition's paired seed (its run's paired table; the row's model is the ensemble). Rows that
    share questions are not independent: pool rows of different runs only (`independent`)."""
    counts = [row_counts(r) for r in rows]
    if not counts or any(c is None for c in counts):
        return None
    strata = [c for c in counts if c is not None]
    if seed is None and len(rows) == 1:
        (one,) = rows
        cond = {"task": one.dataset, "label": one.label, "strength": one.strength}
        seed = condition_seed({**cond, "ensemble": one.model})
    elif seed is None:
        seed = pool_seed(rows[0].label, strata)
    return paired_counts_estimate(strata, seed)


# What a pooled line's numbers are, as the board says beside them
POOLED_ESTIMATOR = (
    "each question counted once, the questions resampled within each row (stratified paired "
    f"bootstrap, {BOOT:,} resamples, seeded as the report); McNemar's exact p"
)


@dataclass(frozen=True)
class PooledLine:
    """One model's RRMaj - MAJ at one config, pooled over its rows of independent runs."""

    model: str
    label: str  # the config, "3c2t"
    band: str  # `rrdemo.config.Composition.band`
    rows: tuple[BoardRow, ...]  # the pooled rows, the paper's tasks first, then by task
    left_out: tuple[str, ...]  # rows shown, not pooled, each with why
    estimate: PairedEstimate


def pooled_lines(rows: Iterable[BoardRow]) -> list[PooledLine]:
    """Per model (sorted) and config (by rho): RRMaj - MAJ pooled over the current rows of the
    run's decisions (`pooled_line` of the `independent` ones), across task families (the rows
    name theirs); a model without such rows has none."""
    counted = [r for r in rows if r.ranked and row_counts(r) is not None]
    lines = []
    for model in sorted({r.model for r in counted}):
        mine = [r for r in counted if r.model == model]
        for label in sorted({r.label for r in mine}):
            kept, left = independent([r for r in mine if r.label == label])
            kept.sort(key=lambda r: (r.beyond_the_paper, r.dataset, r.submission_id))
            estimate = pooled_line(kept)
            if estimate is not None:
                band = kept[0].band
                lines.append(PooledLine(model, label, band, tuple(kept), tuple(left), estimate))
    return sorted(lines, key=lambda line: (line.model, line.rows[0].rho, line.label))


def _interval(samples: list[np.ndarray]) -> Interval | None:
    return Interval(*interval95(sum(samples) / len(samples))) if samples else None


def _intervals(
    majority: list[BoardRow], minority: list[BoardRow], seed: int
) -> tuple[str, Interval | None]:
    """RRMaj's interval under majority corruption and what it carries (`INTERVALS`): each row's
    questions resampled, paired, where every row has its counts; else a binomial over each
    majority row's stated questions."""
    counts = [row_counts(r) for r in majority + minority]
    if counts and all(c is not None for c in counts):
        draws = resampled([c for c in counts if c is not None], seed)[: len(majority)]
        right = [(d[:, 0] + d[:, 2]) / r.n_questions for d, r in zip(draws, majority, strict=True)]
        return "paired", _interval(right)
    stated = [r for r in majority if r.rrmaj_accuracy is not None]
    if not stated:
        return "", None
    rng = np.random.default_rng(seed)
    right = [rng.binomial(r.n_questions, r.rrmaj_accuracy, BOOT) / r.n_questions for r in stated]
    return "stated n", _interval(right)


def score_model(model: str, rows: Iterable[BoardRow], *, seed: int = 0) -> ModelScore:
    """The summary numbers for one model over the current rows of `rows` (rows of other models,
    superseded rows, rows below `MIN_QUESTIONS` and rows that may share another's questions,
    `independent`, are not averaged). Where every row carries its paired counts the Delta-based
    scores are left to `pooled_lines` (None here): RRMaj - MAJ is not averaged over rows."""
    mine = [r for r in rows if r.model == model and r.delta is not None and r.ranked]
    mine, left = independent(mine)
    majority = [r for r in mine if r.band == "majority"]
    minority = [r for r in mine if r.band == "minority"]
    rr_major = [r.rrmaj_accuracy for r in majority if r.rrmaj_accuracy is not None]
    maj_major = [r.maj_accuracy for r in majority if r.maj_accuracy is not None]
    basis, rrmaj_ci = _intervals(majority, minority, derive_seed(seed, "board", model))
    gain = tax = None
    if basis != "paired":  # the paper's definitions, on rows without paired counts
        gain = _mean([r.delta for r in majority if r.delta is not None])
        tax = _mean([r.delta for r in minority if r.delta is not None])
    return ModelScore(
        model=model,
        n_majority_rows=len(majority),
        n_minority_rows=len(minority),
        rrmaj_majority=_mean(rr_major),
        maj_majority=_mean(maj_major),
        mean_gain=gain,
        robustness_tax=tax,
        asymmetric_yield=None if gain is None or tax is None else gain + tax,
        rrmaj_majority_ci=rrmaj_ci,
        prompt_styles=_stated(majority + minority, "prompt_style"),
        eos_policies=_stated(majority + minority, "eos_policy"),
        sources=tuple(sorted({r.source for r in majority + minority})),
        estimators=_stated(majority + minority, "estimator"),
        questions=min((r.n_questions for r in majority + minority), default=0),
        intervals=basis,
        left_out=tuple(left),
    )


def rank_models(rows: Iterable[BoardRow], *, seed: int = 0) -> list[ModelScore]:
    """Every model's score, best RRMaj accuracy under majority corruption first: the scores over
    the paper's tasks, then those over the generated tasks, each family ranked on its own rows.
    A model with no current row in a family has no score there."""
    ranked: list[ModelScore] = []
    rows = [r for r in rows if r.ranked]
    for family in TASK_FAMILIES:
        mine = [r for r in rows if task_family(r) == family]
        scores = [
            replace(score_model(model, mine, seed=seed), tasks=family)
            for model in sorted({r.model for r in mine})
        ]
        ranked += sorted(
            scores,
            key=lambda s: (s.rrmaj_majority is None, -(s.rrmaj_majority or 0.0), s.model),
        )
    return ranked


def rank_labels(scores: Sequence[ModelScore]) -> list[str]:
    """The rank of each score within its task family, in order: equal RRMaj accuracy under
    majority corruption (to the 0.1 point shown) is one rank written "=k" on every tied line;
    a score without that accuracy has no rank ("-")."""

    def shown(score: ModelScore) -> float | None:
        value = score.rrmaj_majority
        return None if value is None else round(100 * value, 1)

    labels = []
    for score in scores:
        value = shown(score)
        if value is None:
            labels.append("-")
            continue
        family = [shown(s) for s in scores if s.tasks == score.tasks]
        rank = 1 + sum(v is not None and v > value for v in family)
        tied = sum(v == value for v in family) > 1
        labels.append(f"={rank}" if tied else str(rank))
    return labels


def accuracy_by_rho(
    rows: Iterable[BoardRow],
) -> dict[str, list[tuple[float, float | None, float | None]]]:
    """Per model: (rho, mean MAJ, mean RRMaj) points sorted by rho, for the chart; a model's
    generated-task rows are a line of their own, "<model> (generated, beyond the paper)"."""
    buckets: dict[tuple[str, float], tuple[list[float], list[float]]] = {}
    for row in rows:
        line = f"{row.model} ({BEYOND_THE_PAPER})" if row.beyond_the_paper else row.model
        maj, rr = buckets.setdefault((line, round(row.rho, 6)), ([], []))
        if row.maj_accuracy is not None:
            maj.append(row.maj_accuracy)
        if row.rrmaj_accuracy is not None:
            rr.append(row.rrmaj_accuracy)
    out: dict[str, list[tuple[float, float | None, float | None]]] = {}
    for (model, rho), (maj, rr) in sorted(buckets.items()):
        out.setdefault(model, []).append((rho, _mean(maj), _mean(rr)))
    return out
