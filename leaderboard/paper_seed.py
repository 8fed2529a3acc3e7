"""The paper's reported tables, seeded into the leaderboard as approved "paper" submissions.

Two tables of "The Consensus Trap" are carried over exactly (accuracy in %, as printed):
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
same value as MAJ and RRMaj accuracy. Stored values are fractions (percent / 100).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import AuditRecord, SubmissionRecord
from leaderboard.schema import ResultRow, Submission

# Paper model name -> Hugging Face hub id (see docs/leaderboard.md for the reasoning).
MODEL_IDS = {
    "Llama-3.3-70B": "meta-llama/Llama-3.3-70B-Instruct",
    "Llama-4-Scout-17B": "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "Qwen2.5-32B": "Qwen/Qwen2.5-32B-Instruct",
    "Qwen3-30B": "Qwen/Qwen3-30B-A3B",
    "Mistral-3.1-24B": "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
}
# Dataset spellings used in the tables -> the leaderboard's dataset ids.
DATASET_IDS = {
    "Logic3": "logic3",
    "Logic-3": "logic3",
    "Logic7": "logic7",
    "Logic-7": "logic7",
    "Track7": "track7",
    "Track-7": "track7",
    "AQuA": "aqua",
    "GSM8K": "gsm8k",
    "MATH500": "math500",
}
PAPER_N, PAPER_K, PAPER_M, PAPER_QUESTIONS = 5, 100, 5, 128
PAPER_CREATED = datetime(2025, 1, 1, tzinfo=timezone.utc)  # nominal; keeps the hash stable
PAPER_SUBMITTER = "The Consensus Trap (paper)"

# fmt: off
MODERATE_TABLE = """
Llama-3.3-70B:
Logic3    99.2  100.0  100.0    0.0   98.4   97.7   -0.7   29.7   88.3  +58.6   19.5   59.4  +39.9   14.8
Logic7    85.5   89.8   91.4   +1.6   85.2   87.5   +2.3   11.7   70.3  +58.6    6.2   39.1  +32.9    3.1
Track7    94.3   98.4   99.2   +0.8   93.0   94.5   +1.5    0.8   89.1  +88.3    0.0   65.6  +65.6    0.0
AQuA      81.5   84.6   81.5   -3.1   77.8   79.0   +1.2   11.1   68.5  +57.4    3.7   46.9  +43.2    4.3
GSM8K     97.5   97.5   98.0   +0.5   96.0   96.0    0.0   19.4   87.6  +68.2    8.0   66.2  +58.2   10.0
MATH500   84.9   83.3   82.3   -1.0   77.4   76.3   -1.1   19.9   65.1  +45.2    8.1   45.2  +37.1    5.4
Llama-4-Scout-17B:
Logic3    99.2   98.4   98.4    0.0   96.9   98.4   +1.5   91.4   95.3   +3.9   87.5   92.2   +4.7   80.5
Logic7    79.7   85.9   93.8   +7.9   82.0   79.7   -2.3   21.1   67.2  +46.1   17.2   41.4  +24.2   16.4
Track7    94.5   95.3   90.6   -4.7   95.3   91.4   -3.9   92.2   89.8   -2.4   83.6   85.9   +2.3   78.1
AQuA      89.1   90.7   88.9   -1.8   88.3   88.9   +0.6   66.7   87.0  +20.3   62.3   79.0  +16.7   53.1
GSM8K     98.4   98.4   99.2   +0.8   98.4   98.4    0.0   80.5   93.8  +13.3   66.4   87.5  +21.1   56.2
MATH500   90.6   93.0   89.8   -3.2   85.9   89.8   +3.9   66.4   83.6  +17.2   60.2   75.8  +15.6   57.8
Qwen2.5-32B:
Logic3    97.7   99.2   98.4   -0.8   96.9   94.5   -2.4   45.3   76.6  +31.3   28.1   68.0  +39.9   21.1
Logic7    76.6   88.3   81.2   -7.1   68.0   77.3   +9.3   22.7   54.7  +32.0   10.2   38.3  +28.1   11.7
Track7    76.6   74.2   76.6   +2.4   69.5   75.0   +5.5   14.8   60.9  +46.1    3.9   42.2  +38.3    6.2
AQuA      82.8   85.2   83.6   -1.6   81.2   64.1  -17.1   17.2   54.7  +37.5    9.4   35.9  +26.5   10.2
GSM8K     97.7   96.9   96.9    0.0   96.9   92.2   -4.7   21.1   60.2  +39.1    8.6   26.6  +18.0   10.9
MATH500   89.1   91.4   87.5   -3.9   87.5   74.2  -13.3   23.4   51.6  +28.2   10.9   36.7  +25.8   12.5
Qwen3-30B:
Logic3    98.4  100.0   99.2   -0.8   97.7   98.4   +0.7   89.1   90.6   +1.5   76.6   80.5   +3.9   68.8
Logic7    75.0   73.2   90.6  +17.4   67.1   95.3  +28.2   82.0   85.9   +3.9   67.2   79.7  +12.5   57.0
Track7    94.3   95.6   91.4   -4.2   89.9   93.0   +3.1   54.4   92.2  +37.8   50.9   92.2  +41.3   51.3
AQuA      82.0   83.3   85.9   +2.6   85.2   85.2    0.0   77.3   77.3    0.0   65.6   72.7   +7.1   61.7
GSM8K     99.2   98.4   99.2   +0.8   99.2   98.4   -0.8   92.2   92.2    0.0   85.2   83.6   -1.6   75.0
MATH500   92.2   95.3   97.7   +2.4   93.0   97.7   +4.7   87.5   95.3   +7.8   79.7   87.5   +7.8   64.8
Mistral-3.1-24B:
Logic3    95.3   99.2   96.9   -2.3   92.2   85.9   -6.3   57.8   65.6   +7.8   38.3   48.4  +10.1   35.2
Logic7    69.5   73.4   71.9   -1.5   54.7   57.8   +3.1   18.0   30.5  +12.5    8.6   18.8  +10.2    9.4
Track7    91.4   93.0   96.1   +3.1   86.7   88.3   +1.6   71.9   73.4   +1.5   48.4   43.8   -4.6   37.5
AQuA      84.4   82.7   79.6   -3.1   74.7   69.1   -5.6   26.5   55.6  +29.1   11.7   27.2  +15.5   13.3
GSM8K     99.2   99.0   98.0   -1.0   97.0   93.5   -3.5   39.1   67.2  +28.1   14.1   29.7  +15.6   19.5
MATH500   85.2   81.2   79.7   -1.5   70.3   71.9   +1.6   35.2   56.2  +21.0   17.2   27.3  +10.1   16.4
"""

STRONG_TABLE = """
Llama-4-Scout-17B:
AQuA      87.5   87.1   84.7   -2.4   84.0   79.8   -4.2   24.5   63.8  +39.3   14.1   36.2  +22.1   11.7
GSM8K    100.0   99.4  100.0   +0.6   98.2   94.5   -3.7    4.3   74.2  +69.9    1.8   30.1  +28.3    1.6
MATH500   91.4   92.6   92.0   -0.6   90.8   84.0   -6.8   18.4   66.3  +47.9    6.1   33.7  +27.6    9.4
Track7    91.4   93.3   91.4   -1.9   92.0   88.3   -3.7   73.6   73.6    0.0   64.4   67.5   +3.1   60.9
Logic7    81.6   84.7   85.9   +1.2   75.5   64.4  -11.0    6.7   38.7  +31.9    3.1   13.5  +10.4    3.1
Logic3   100.0   99.4  100.0   +0.6  100.0   94.5   -5.5   23.3   82.2  +58.9    4.9   27.0  +22.1    3.9
Llama-3.3-70B:
AQuA      83.6   81.6   81.0   -0.6   77.9   74.2   -3.7    1.2   44.2  +43.0    0.0   14.1  +14.1    0.0
GSM8K     98.4   96.9   96.9    0.0   96.9   94.5   -2.4    1.2   69.3  +68.1    0.0   12.3  +12.3    0.0
MATH500   87.5   83.4   78.5   -4.9   74.8   63.8  -11.0    0.6   41.1  +40.5    0.0   11.0  +11.0    0.0
Track7    98.4   99.4   96.3   -3.1   94.5   96.3   +1.8    1.2   79.1  +77.9    0.0   25.2  +25.2    0.0
Logic7    81.6   86.5   89.0   +2.5   78.5   72.4   -6.1    0.0   37.4  +37.4    0.0    9.8   +9.8    0.0
Logic3   100.0  100.0   98.8   -1.2  100.0   83.4  -16.6    0.6   46.6  +46.0    0.0    8.6   +8.6    0.0
Mistral-3.1-24B:
AQuA      83.6   84.0   81.6   -2.4   74.2   68.7   -5.5    1.8   38.0  +36.2    0.0   14.7  +14.7    0.0
GSM8K     96.1   99.4   98.2   -1.2   95.1   89.0   -6.1    2.5   52.1  +49.6    0.0    8.6   +8.6    0.0
MATH500   81.2   82.8   75.5   -7.3   67.5   52.1  -15.4    1.8   36.8  +35.0    0.0   11.0  +11.0    0.0
Track7    89.8   93.9   86.5   -7.4   84.7   65.0  -19.7    3.1   28.8  +25.7    0.6    6.7   +6.1    0.0
Logic7    67.5   71.8   58.9  -12.9   62.0   43.6  -18.4    0.6   16.6  +16.0    0.0    1.8   +1.8    0.0
Logic3   100.0   98.2   94.5   -3.7   95.1   67.5  -27.6    1.2   22.7  +21.5    0.0    1.2   +1.2    0.0
Qwen2.5-32B:
AQuA      86.7   85.2   79.7   -5.5   78.9   52.3  -26.6    2.3   28.9  +26.6    0.0    3.1   +3.1    0.8
GSM8K     96.9   98.4   97.7   -0.8   95.3   76.6  -18.8    1.6   22.7  +21.1    0.0    0.8   +0.8    0.0
MATH500   86.7   88.3   80.5   -7.8   84.4   55.5  -28.9    0.0   21.9  +21.9    0.0    0.0   +0.0    0.0
Track-7   75.0   72.7   71.1   -1.6   61.7   53.1   -8.6    1.6   23.4  +21.9    0.0    2.3   +2.3    0.0
Logic-7   77.3   83.6   76.6   -7.0   68.0   46.1  -21.9    3.1   19.5  +16.4    0.0    0.8   +0.8    1.6
Logic-3   99.2   98.4   96.9   -1.6   99.2   60.9  -38.3    0.8   21.9  +21.1    0.0    1.6   +1.6    0.0
Qwen3-30B:
AQuA      85.9   83.6   85.2   +1.6   85.2   82.8   -2.4   18.8   23.4   +4.6   11.7   14.8   +3.1   13.3
GSM8K     98.4   98.4   99.2   +0.8   98.4   97.7   -0.7   28.9   28.1   -0.8   17.2   21.1   +3.9   14.1
MATH500   86.7   95.3   96.1   +0.8   93.8   91.4   -2.4   42.2   40.6   -1.6   21.9   28.1   +6.2   18.0
Track7    90.6   92.2   91.4   -0.8   90.6   91.4   +0.8   91.4   89.1   -2.3   87.5   86.7   -0.8   75.8
Logic7    91.4   93.0   93.8   +0.8   88.3   77.3  -10.9   16.4   25.0   +8.6    4.7    5.5   +0.8    4.7
Logic3    99.2   98.4   99.2   +0.8   97.7   97.7    0.0   17.2   14.1   -3.1    1.6    3.1   +1.5    9.4
"""
# fmt: on

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
                maj=tuple(g[0] for g in groups),  # type: ignore[arg-type]
                rrmaj=tuple(g[1] for g in groups),  # type: ignore[arg-type]
                delta=tuple(g[2] for g in groups),  # type: ignore[arg-type]
                floor=cells[14],
            )
        )
    return lines


def _fraction(percent: str) -> float:
    return float(Decimal(percent) / 100)


def _row(line: PaperLine, c: int, maj: str, rrmaj: str) -> ResultRow:
    hub_id = MODEL_IDS[line.paper_model]
    return ResultRow(
        model=hub_id,
        model_revision=None,
        agent_models=[hub_id] * PAPER_N,
        corrupted_agents=list(range(c)),
        dataset=DATASET_IDS[line.paper_dataset],  # type: ignore[arg-type]
        strength=line.strength,  # type: ignore[arg-type]
        n_agents=PAPER_N,
        n_corrupted=c,
        n_truthful=PAPER_N - c,
        k=PAPER_K,
        m=PAPER_M,
        max_tokens=None,
        n_questions=PAPER_QUESTIONS,
        maj_accuracy=_fraction(maj),
        rrmaj_accuracy=_fraction(rrmaj),
        config_hash=f"paper-{line.strength}",
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
        schema_version=1,
        submitter=PAPER_SUBMITTER,
        notes=f"Reported in the paper: {TABLE_LABELS[strength]}. N=5, K=100, M=5, 128 questions.",
        source="paper",
        rrdemo_version="paper",
        created=PAPER_CREATED,
        results=rows,
    )


def seed_paper(session: Session) -> int:
    """Insert the paper's tables as approved submissions unless present or deleted by an admin.

    Idempotent (found by content hash); returns how many submissions were added.
    """
    from leaderboard.service import store_submission

    added = 0
    for strength in TABLES:
        submission = paper_submission(strength)
        digest = submission.content_hash()
        present = session.scalar(
            select(SubmissionRecord.id).where(SubmissionRecord.content_hash == digest)
        )
        deleted = session.scalar(
            select(AuditRecord.id).where(
                AuditRecord.content_hash == digest, AuditRecord.action == "delete"
            )
        )
        if present is None and deleted is None:
            store_submission(session, submission, status="approved")
            added += 1
    return added
