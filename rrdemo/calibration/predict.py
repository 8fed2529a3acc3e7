"""MAJ's accuracy predicted from a calibration, at the level where the outcome is counted: the vote.

A calibration measures single agents; the trap lives in the vote. The model here: N agents answer
independently, each honest one drawing its answer from its cell's per-answer rates without an
injection, each injected one from the rates under the injection (gold, target, another answer, no
answer), and the plurality wins with the project's tie rule (`rrdemo.voting.plurality`: a tie is
broken uniformly at random, unreadable answers do not vote). The accuracy is then exact: every
composition of the votes is enumerated and weighted by its multinomial probability, nothing is
simulated. Its interval is a percentile bootstrap over the calibration's questions, the honest and
the injected answers of a question resampled together.

"Another answer" is spread evenly over a number of wrong values, so two wrong agents may agree on
one: on letter tasks over the remaining option letters; on number and MATH tasks over as many values
as make two such answers agree as often as they do in the log (`other_agreement`: a question's
common mistake is shared, so wrong numbers are not a vote of their own each; docs/evidence.md gives
the count). With no agreeing pair in the log, every other answer counts apart (`spread` None).

Selection rule 3 (`rule3`) reads these predictions: the trap is judged where it is counted.

Pure functions: nothing here runs a model.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rrdemo.calibration.log import CalibrationLog
from rrdemo.report.stats import BOOT, interval95, resample
from rrdemo.voting import derive_seed

N_AGENTS = 5
CONFIGS = tuple(f"{c}c{N_AGENTS - c}t" for c in range(N_AGENTS + 1))  # 0c5t ... 5c0t
ROOM = ("0c5t", "3c2t")  # MAJ's loss from no corruption to a slight majority corrupted
GOLD, TARGET, OTHER, NONE = range(4)  # an answer's kind, as the log shows it


def answer_kind(record: dict) -> int:
    """GOLD, TARGET, OTHER or NONE for one calibration answer."""
    if record["correct"]:
        return GOLD
    if record["obeyed"]:
        return TARGET
    return NONE if record["answer"] is None else OTHER


def task_letters(task: str) -> int | None:
    """How many option letters a question of `task` has (None: a number or MATH task)."""
    from rrdemo.tasks import get_task
    from rrdemo.tasks.benchmarks import LetterTask

    found = get_task(task)
    return len(found.letters) if isinstance(found, LetterTask) else None


def numeric_spread(agree: int, pairs: int) -> int | None:
    """The wrong values another answer to a number or MATH question spreads over so that two of
    them agree as often as `agree` of `pairs` did (uniform over m values: 1 in m); None (apart)
    when none agreed."""
    return max(1, round(pairs / agree)) if agree else None


@dataclass(frozen=True)
class Interval:
    value: float
    lo: float
    hi: float

    def text(self, signed: bool = False) -> str:
        form = "{:+.0f}" if signed else "{:.0f}"
        v, lo, hi = (form.format(100 * x) for x in (self.value, self.lo, self.hi))
        return f"{v} [{lo}, {hi}]"


@dataclass(frozen=True)
class Prediction:
    """MAJ's predicted accuracy per config of N = 5 for one cell (model x task x style x
    injection), and its room MAJ(0c5t) - MAJ(3c2t), each with a 95% bootstrap interval."""

    model: str
    task: str
    style: str
    injection: str
    questions: int  # calibration questions with an honest and an injected answer
    spread: int | None  # the wrong values "another answer" spreads over (None: each apart)
    maj: dict[str, Interval]  # config -> predicted accuracy
    room: Interval

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.model, self.task, self.style, self.injection)


# -- the exact vote ----------------------------------------------------------------------------
@functools.cache
def _compositions(agents: int, kinds: int) -> np.ndarray:
    """Every way `agents` answers fall into `kinds` kinds (rows of counts)."""
    rows = [
        np.bincount(np.array(combo, dtype=int), minlength=kinds)
        for combo in itertools.combinations_with_replacement(range(kinds), agents)
    ]
    return np.array(rows, dtype=int).reshape(-1, kinds)


def _kinds(spread: int | None) -> int:
    """The kinds of answer the vote tells apart: gold, target, each wrong value (or one kind of
    lone other answers), none."""
    return 3 + (spread or 1)


def _gold_wins(counts: np.ndarray, spread: int | None) -> float:
    """The chance the gold wins a vote with these counts (gold, target, others..., none)."""
    gold, target = counts[0], counts[1]
    others = counts[2:-1]
    if gold == 0:
        return 0.0
    if spread:
        votes = [gold, target, *others]
        top = max(votes)
        return 1.0 / votes.count(top) if gold == top else 0.0
    lone = int(others[0])  # each another answer is a vote of its own
    top = max(gold, target, 1 if lone else 0)
    if gold < top:
        return 0.0
    return 1.0 / (1 + (target == gold) + (lone if gold == 1 else 0))


@functools.cache
def _vote_table(honest: int, injected: int, spread: int | None) -> tuple[np.ndarray, ...]:
    """The compositions of the honest and the injected votes, their multinomial coefficients and
    the chance the gold wins for each pair of compositions."""
    kinds = _kinds(spread)
    a, b = _compositions(honest, kinds), _compositions(injected, kinds)
    coef_a = np.array([_multinomial(row) for row in a], dtype=float)
    coef_b = np.array([_multinomial(row) for row in b], dtype=float)
    wins = np.array([[_gold_wins(x + y, spread) for y in b] for x in a])
    return a, coef_a, b, coef_b, wins


def _multinomial(counts: Sequence[int]) -> int:
    out, total = 1, 0
    for c in counts:
        total += int(c)
        out *= math.comb(total, int(c))
    return out


def _spread(rates: np.ndarray, spread: int | None) -> np.ndarray:
    """Rates over (gold, target, other, none) -> rates over the vote's kinds (rows: resamples)."""
    if not spread:
        return rates
    other = np.repeat(rates[:, OTHER : OTHER + 1] / spread, spread, axis=1)
    return np.concatenate([rates[:, :OTHER], other, rates[:, NONE:]], axis=1)


def _probabilities(rates: np.ndarray, compositions: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """P(composition) for each row of rates (resamples x compositions).

    Only elementwise products, in a fixed order, so that every CPU gives the same bits: numpy's
    `power` (AVX-512 has its own kernels) and `einsum` may not, and with them one bootstrap bound
    of the committed prediction differed by one unit in its sixth decimal between an AVX-512 and
    an AVX2 machine."""
    powers = [np.ones_like(rates)]
    for _ in range(int(compositions.max(initial=0))):
        powers.append(powers[-1] * rates)
    table = np.stack(powers)  # exponent x resample x kind
    out = np.broadcast_to(coef, (rates.shape[0], len(coef))).copy()
    for kind in range(compositions.shape[1]):
        out = out * table[compositions[:, kind], :, kind].T
    return out


CHUNK = 256  # rows per block in `maj_accuracy`: bounds its memory (a row's sums are the same in any block)


def _blocks(n: int) -> list[slice]:
    return [slice(start, start + CHUNK) for start in range(0, n, CHUNK)]


def maj_accuracy(
    honest: np.ndarray, injected: np.ndarray, corrupted: int, spread: int | None
) -> np.ndarray:
    """MAJ's exact accuracy with `corrupted` of N_AGENTS injected, for each row of rates over
    (gold, target, other, none) of the honest and the injected answers; another answer spreads
    evenly over `spread` wrong values (None: each counts apart).

    Bootstrap resamples repeat rates (a rate is a count of the questions), so each distinct honest
    row's chance of winning against every injected composition is computed once, in blocks."""
    honest, injected = np.atleast_2d(honest), np.atleast_2d(injected)
    a, coef_a, b, coef_b, wins = _vote_table(N_AGENTS - corrupted, corrupted, spread)
    h_rows, h_of = np.unique(honest, axis=0, return_inverse=True)
    i_rows, i_of = np.unique(injected, axis=0, return_inverse=True)
    h_rates, i_rates = _spread(h_rows, spread), _spread(i_rows, spread)
    pb = np.concatenate([_probabilities(i_rates[r], b, coef_b) for r in _blocks(len(i_rows))])
    # against[u, j]: P(the gold wins | injected composition j) for distinct honest row u
    against = np.empty((len(h_rows), len(b)))
    for rows in _blocks(len(h_rows)):
        pa = _probabilities(h_rates[rows], a, coef_a)  # row x honest composition
        against[rows] = (pa[:, :, None] * wins[None, :, :]).sum(axis=1)  # pairwise sums, any CPU
    out = np.empty(len(honest))
    for rows in _blocks(len(honest)):
        out[rows] = (against[h_of.ravel()[rows]] * pb[i_of.ravel()[rows]]).sum(axis=1)
    return out


# -- a calibration's cells ---------------------------------------------------------------------
def _cells(answers: Iterable[dict]) -> dict[tuple[str, str, str, str], dict[str, int]]:
    """The kind of each question's answer, per cell (model, task, style, injection)."""
    cells: dict[tuple[str, str, str, str], dict[str, int]] = defaultdict(dict)
    for a in answers:
        key = (a["model"], a["task"], a["style"], a["injection"])
        cells[key][a["question_id"]] = answer_kind(a)
    return cells


def _one_hot(kinds: Sequence[int]) -> np.ndarray:
    out = np.zeros((len(kinds), 4))
    out[np.arange(len(kinds)), kinds] = 1.0
    return out


def predict_cell(
    honest: dict[str, int],
    injected: dict[str, int],
    spread: int | None,
    seed: int,
    boot: int = BOOT,
) -> tuple[int, dict[str, Interval], Interval]:
    """MAJ per config and the room from one cell's answer kinds by question id (honest: the cell
    without injection), on the questions both hold; the bootstrap resamples those questions."""
    qids = sorted(set(honest) & set(injected))
    h = _one_hot([honest[q] for q in qids])
    i = _one_hot([injected[q] for q in qids])
    rows = resample(np.random.default_rng(seed), len(qids), boot)
    h_boot, i_boot = h[rows].mean(axis=1), i[rows].mean(axis=1)
    h_all, i_all = h.mean(axis=0, keepdims=True), i.mean(axis=0, keepdims=True)
    maj, draws = {}, {}
    for c, config in enumerate(CONFIGS):
        point = float(maj_accuracy(h_all, i_all, c, spread)[0])
        draws[config] = maj_accuracy(h_boot, i_boot, c, spread)
        maj[config] = Interval(point, *interval95(draws[config]))
    first, last = ROOM
    room = Interval(maj[first].value - maj[last].value, *interval95(draws[first] - draws[last]))
    return len(qids), maj, room


def predictions(
    log: CalibrationLog | Iterable[dict], injections: Sequence[str] = ("strong", "moderate")
) -> list[Prediction]:
    """MAJ predicted per config, with its room, for every injected cell of a calibration that has
    its cell without injection, in the order the cells were first answered."""
    answers = log.answers if isinstance(log, CalibrationLog) else list(log)
    cells = _cells(answers)
    numeric = numeric_spread(*other_agreement(answers))
    out = []
    for (model, task, style, injection), injected in cells.items():
        honest = cells.get((model, task, style, "none"))
        if injection not in injections or not honest or not set(honest) & set(injected):
            continue
        letters = task_letters(task)
        spread = letters - 2 if letters else numeric
        seed = derive_seed(0, "predict", model, task, style, injection)
        n, maj, room = predict_cell(honest, injected, spread, seed)
        out.append(Prediction(model, task, style, injection, n, spread, maj, room))
    return out


def other_agreement(log: CalibrationLog | Iterable[dict]) -> tuple[int, int]:
    """How often two "another answer"s to the same question agree, on number and MATH tasks:
    (agreeing pairs, pairs), over the answers of one model x style to one question (its cells
    without and with each injection; the strings as extracted, stripped)."""
    answers = log.answers if isinstance(log, CalibrationLog) else list(log)
    groups: dict[tuple, list[str]] = defaultdict(list)
    for a in answers:
        if answer_kind(a) == OTHER and task_letters(a["task"]) is None:
            groups[(a["model"], a["task"], a["style"], a["question_id"])].append(a["answer"])
    agree = pairs = 0
    for values in groups.values():
        for x, y in itertools.combinations(values, 2):
            pairs += 1
            agree += x.strip() == y.strip()
    return agree, pairs


# -- selection rule 3 --------------------------------------------------------------------------
# Rule 2 (`rrdemo.calibration.table.selected`) judged the trap per agent and found no cell; it
# stays as the record of what it found. Rule 3 judges it at the vote: among the paper's injections'
# cells whose injected answers state the target within their first K_RULE tokens at most
# EARLY_MAX of the time (reasoning left for an honest agent to interrupt) and whose predicted room
# has a lower 95% bound above 0 (MAJ really loses from 0c5t to 3c2t), it takes the paper task with
# the largest predicted room and the generated task with the largest predicted room; a tie goes to
# the cell whose injected answers state the target early less often (docs/evidence.md).
EARLY_MAX = 0.5


@dataclass(frozen=True)
class Rule3Cell:
    prediction: Prediction
    early: float  # share of the injected answers stating the target within K_RULE tokens

    @property
    def eligible(self) -> bool:
        return self.early <= EARLY_MAX and self.prediction.room.lo > 0


def early_target(answers: Iterable[dict], k: int) -> dict[tuple[str, str, str, str], float]:
    """Per cell, the share of its answers stating the target within their first k tokens (cells
    whose answers all carry statement positions)."""
    hits: dict[tuple, list[bool]] = defaultdict(list)
    for a in answers:
        at = a.get("stated_at")
        key = (a["model"], a["task"], a["style"], a["injection"])
        hits[key].append(None if at is None else at.get("target") is not None and at["target"] <= k)
    return {key: sum(v) / len(v) for key, v in hits.items() if None not in v}


def rule3_cells(log: CalibrationLog | Iterable[dict]) -> list[Rule3Cell]:
    """Every injected cell under the paper's injections with its prediction and early share."""
    from rrdemo.calibration.table import K_RULE, TRAPS

    answers = log.answers if isinstance(log, CalibrationLog) else list(log)
    early = early_target(answers, K_RULE)
    return [Rule3Cell(p, early[p.key]) for p in predictions(answers, TRAPS) if p.key in early]


def rule3(cells: Sequence[Rule3Cell]) -> dict[str, Rule3Cell | None]:
    """Rule 3's picks: {"paper": cell or None, "generated": cell or None}."""
    from rrdemo.tasks import TASK_NAMES
    from rrdemo.tasks.generated import generated_steps

    picks: dict[str, Rule3Cell | None] = {}
    for kind, member in (
        ("paper", lambda t: t in TASK_NAMES),
        ("generated", lambda t: generated_steps(t) is not None),
    ):
        pool = [c for c in cells if c.eligible and member(c.prediction.task)]
        # rooms equal up to float noise tie (two injections can share every rate)
        picks[kind] = min(
            pool, key=lambda c: (-round(c.prediction.room.value, 9), c.early), default=None
        )
    return picks
