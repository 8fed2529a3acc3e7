"""The paper's reported tables as submissions; `leaderboard.service.seed_board` stores them.

Two tables of "The Consensus Trap", carried over exactly in `rrdemo.report.paper.main_tables`:
- MODERATE_TABLE: Table "Systemic Resilience under Moderate Advisory Injection"
  (tab:moderate_bias_summary, main text), 5 models x 6 datasets;
- STRONG_TABLE: Table "Systemic Resilience under Strong Corrupt Injection" (appendix C,
  tab:main_results_must_bias), 5 models x 6 datasets.
Each line: dataset, Ceiling (0c5t), then MAJ / RRMaj / Delta for 1c4t, 2c3t, 3c2t, 4c1t, then
Floor (5c0t). Delta is kept only so tests can re-derive it from MAJ and RRMaj and catch typos.

Settings the paper states: N = 5, K = 100, M = N = 5, 128 sampled questions per dataset. It does
not state L (max tokens) or which agent positions were corrupted: L is stored as null and the
corrupted agents as the first c positions. The paper prints one number for the Ceiling and the
Floor (there RR is "equivalent to standard auto-regressive generation"), so those rows carry the
same value as MAJ and RRMaj accuracy. The paper's accuracies are means over pool draws (its
appendix D), so its rows name the estimator "pool-draws". The settings beyond the paper a row may state (adversary,
prompt style, end-of-sequence policy) are left null, "not stated": the tables do not print them,
and the paper does not say what a writer's end-of-sequence does in RR (docs/adversary.md). Stored
values are fractions (percent / 100). Data only: no database here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal

from rrdemo.report.paper.main_tables import DATASET_IDS, MODERATE_TABLE, STRONG_TABLE, main_lines
from rrdemo.report.paper.tables import MODEL_IDS as ALL_MODEL_IDS
from rrdemo.report.submission import SCHEMA_VERSION, ResultRow, Submission

# The five models of the main tables -> Hugging Face hub ids (see docs/leaderboard.md).
MODEL_IDS = {line.model: ALL_MODEL_IDS[line.model] for line in main_lines("moderate")}
PAPER_N, PAPER_K, PAPER_M, PAPER_QUESTIONS = 5, 100, 5, 128
# What every row of the paper's tables shares (L and the weights' revision are not stated).
PAPER_SETTINGS = {
    "model_revision": None,
    "n_agents": PAPER_N,
    "k": PAPER_K,
    "m": PAPER_M,
    "max_tokens": None,
    "n_questions": PAPER_QUESTIONS,
}
PAPER_CREATED = datetime(2025, 1, 1, tzinfo=timezone.utc)  # nominal; keeps the hash stable
PAPER_SUBMITTER = "The Consensus Trap (paper)"

TABLES = {"moderate": MODERATE_TABLE, "strong": STRONG_TABLE}
TABLE_LABELS = {
    "moderate": "tab:moderate_bias_summary (Moderate Advisory Injection, main text)",
    "strong": "tab:main_results_must_bias (Strong Imperative Injection, appendix C)",
}


@dataclass(frozen=True)
class PaperLine:
    """One printed table line: a model and dataset under one strength, values in percent."""

    strength: str
    paper_model: str
    paper_dataset: str
    ceiling: str
    maj: tuple[str, str, str, str]  # 1c4t, 2c3t, 3c2t, 4c1t
    rrmaj: tuple[str, str, str, str]
    delta: tuple[str, str, str, str]
    floor: str


def paper_lines(strength: str) -> list[PaperLine]:
    """Parse one of the embedded tables into `PaperLine`s (strings kept exactly as printed)."""
    lines: list[PaperLine] = []
    model = ""
    for raw in TABLES[strength].strip().splitlines():
        if raw.endswith(":"):
            model = raw[:-1]
            continue
        cells = raw.split()
        if len(cells) != 15:
            raise ValueError(f"paper table line has {len(cells)} cells, expected 15: {raw!r}")
        groups = [cells[2 + 3 * i : 5 + 3 * i] for i in range(4)]
        lines.append(
            PaperLine(
                strength=strength,
                paper_model=model,
                paper_dataset=cells[0],
                ceiling=cells[1],
                maj=tuple(g[0] for g in groups),
                rrmaj=tuple(g[1] for g in groups),
                delta=tuple(g[2] for g in groups),
                floor=cells[14],
            )
        )
    return lines


def _fraction(percent: str) -> float:
    return float(Decimal(percent) / 100)


def _row(line: PaperLine, c: int, maj: str, rrmaj: str) -> ResultRow:
    hub_id = MODEL_IDS[line.paper_model]
    return ResultRow.model_validate(
        {
            **PAPER_SETTINGS,
            "model": hub_id,
            "agent_models": [hub_id] * PAPER_N,
            "corrupted_agents": list(range(c)),
            "dataset": DATASET_IDS[line.paper_dataset],
            "strength": line.strength,
            "n_corrupted": c,
            "n_honest": PAPER_N - c,
            "maj_accuracy": _fraction(maj),
            "rrmaj_accuracy": _fraction(rrmaj),
            "config_hash": f"paper-{line.strength}",
            "estimator": "pool-draws",
        }
    )


def paper_submission(strength: str) -> Submission:
    """The paper's table for `strength` ("moderate" or "strong") as a validated submission."""
    rows: list[ResultRow] = []
    for line in paper_lines(strength):
        rows.append(_row(line, 0, line.ceiling, line.ceiling))
        for c in range(1, 5):
            rows.append(_row(line, c, line.maj[c - 1], line.rrmaj[c - 1]))
        rows.append(_row(line, PAPER_N, line.floor, line.floor))
    return Submission(
        schema_version=SCHEMA_VERSION,
        submitter=PAPER_SUBMITTER,
        notes=f"Reported in the paper: {TABLE_LABELS[strength]}. N=5, K=100, M=5, 128 questions.",
        source="paper",
        provenance=f"the paper, {TABLE_LABELS[strength]}",
        rrdemo_version="paper",
        created=PAPER_CREATED,
        results=rows,
    )
