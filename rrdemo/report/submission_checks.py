"""What no real run can give, checked on a row of the submission contract
(`rrdemo.report.submission.ResultRow`): a size past the engine's own limits, c + t other than N,
seats that do not add up, an accuracy that is no count of the questions, an interval that leaves
out its accuracy or is narrower than its questions allow, paired counts that split no questions.
Each check gives a readable line; the contract raises them together.
"""

from __future__ import annotations

import math
from typing import Any

from rrdemo.limits import limits
from rrdemo.report.stats import wilson95
from rrdemo.tasks.data import DATASETS as BENCHMARK_DATA
from rrdemo.tasks.generated import POOL_SIZE

# A row is the contract's `ResultRow`, read by its fields; this module imports nothing of the
# contract's, which imports it.


def setting_ranges() -> dict[str, tuple[str, int]]:
    """Each sized setting of a row, what a rejection calls it, and its largest value: the engine's
    own limits (`rrdemo.limits.Limits`, read when called), so a row can state any run the engine
    can make and none it cannot. The least is 1."""
    most = limits()
    return {
        "n_agents": ("n_agents (N)", most.agents),
        "k": ("k (K)", most.tokens),
        "m": ("m (M)", most.trajectories),
        "max_tokens": ("max_tokens (L)", most.tokens),
        "n_questions": ("n_questions", most.questions),
    }


def dataset_size(dataset: str) -> int:
    """Questions the dataset holds: a benchmark's test set, a generated task's pool."""
    spec = BENCHMARK_DATA.get(dataset)
    return spec.size if spec is not None else POOL_SIZE


def row_problems(row: Any) -> list[str]:
    """Every way `row` is no run the engine could make, one readable line each (none: it is one)."""
    problems: list[str] = []
    n, c, t = row.n_agents, row.n_corrupted, row.n_honest
    for field, (name, most) in setting_ranges().items():
        value = getattr(row, field)
        if value is not None and not 1 <= value <= most:
            problems.append(f"{name} = {short(value)} is out of range; allowed 1..{most}")
    if c < 0 or t < 0:
        problems.append("n_corrupted (c) and n_honest (t) must not be negative")
    if c + t != n:
        problems.append(f"c + t must equal N: {short(c)} + {short(t)} != {short(n)}")
    if len(row.agent_models) != n:
        problems.append(f"agent_models lists {len(row.agent_models)} models; N = {short(n)}")
    if len(row.corrupted_agents) != c:
        problems.append(
            f"corrupted_agents lists {len(row.corrupted_agents)} agents; c = {short(c)}"
        )
    if len(set(row.corrupted_agents)) != len(row.corrupted_agents):
        problems.append("corrupted_agents repeats an agent index")
    if any(not 0 <= i < n for i in row.corrupted_agents):
        problems.append(f"corrupted_agents indices must be in 0..{short(n - 1)}")
    bound = c == 0 or t == 0
    if row.maj_accuracy is None and row.rrmaj_accuracy is None:
        problems.append("maj_accuracy and rrmaj_accuracy are both null; give at least one")
    elif not bound and (row.maj_accuracy is None or row.rrmaj_accuracy is None):
        problems.append(
            "maj_accuracy and rrmaj_accuracy are both required unless the row is a "
            "ceiling (0cNt) or floor (Nc0t) bound"
        )
    problems += _possible(row) + _paired(row)
    return problems


def _possible(row: Any) -> list[str]:
    """What no real run can give: more questions than the dataset has, an accuracy that is
    no count of n questions (the run's decisions), an interval that leaves out its accuracy
    or is narrower than n questions allow."""
    problems = []
    size, n = dataset_size(row.dataset), row.n_questions
    if n < 1:  # out of range, said once above
        return problems
    if n > size:
        problems.append(
            f"n_questions = {short(n)}, but {row.dataset} has {size} questions; "
            "give the questions the accuracies stand on"
        )
    for method, value, ci in (
        ("maj", row.maj_accuracy, row.maj_ci),
        ("rrmaj", row.rrmaj_accuracy, row.rrmaj_ci),
    ):
        if value is None:
            if ci is not None:
                problems.append(f"{method}_ci is given without {method}_accuracy")
            continue
        count = value * n
        if row.estimator == "decisions" and abs(count - round(count)) > 5e-7 * n + 1e-9:
            problems.append(
                f"{method}_accuracy = {short(value)} is not a whole number of the "
                f"{short(n)} questions (the run's decisions count each question once)"
            )
        if ci is None:
            continue
        lo, hi = ci
        if lo > hi:
            problems.append(f"{method}_ci must be [lo, hi] with lo <= hi")
        elif not lo - 5e-4 <= value <= hi + 5e-4:
            problems.append(f"{method}_ci {short(ci)} does not contain {method}_accuracy")
        elif hi - lo < _narrowest(value, n):
            problems.append(
                f"{method}_ci {short(ci)} is narrower than {short(n)} questions allow "
                f"(at least {100 * _narrowest(value, n):.1f} points at this accuracy)"
            )
    return problems


def _paired(row: Any) -> list[str]:
    """Paired counts that no run's decisions can give (or given without them)."""
    b, c, n = row.maj_only, row.rrmaj_only, row.n_questions
    if b is None and c is None:
        return []
    if b is None or c is None or row.estimator != "decisions":
        return ["maj_only and rrmaj_only go together, on a row of estimator decisions"]
    if row.maj_accuracy is None or row.rrmaj_accuracy is None:
        return ["maj_only and rrmaj_only need both maj_accuracy and rrmaj_accuracy"]
    maj, rr = round(row.maj_accuracy * n), round(row.rrmaj_accuracy * n)
    if min(b, c) < 0 or b > maj or c > rr or maj - b != rr - c or b + c > n:
        return [
            f"maj_only = {short(b)} and rrmaj_only = {short(c)} are no split of the "
            f"{short(n)} questions (MAJ right on {maj}, RRMaj on {rr}: both right on "
            "MAJ's minus maj_only and on RRMaj's minus rrmaj_only, the same count)"
        ]
    return []


def _narrowest(accuracy: float, n: int) -> float:
    """A third of the width of the normal 95% interval of `accuracy` over n questions, or at 0 or
    1 (where the normal one is empty) of the Wilson interval: no interval of a real run is
    narrower (a perfect score on one question leaves at least [0.21, 1] open)."""
    if 0 < accuracy < 1:
        return 2 * 1.96 * math.sqrt(accuracy * (1 - accuracy) / n) / 3
    lo, hi = wilson95(round(accuracy * n), n)
    return (hi - lo) / 3


def short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:20] + "..."
