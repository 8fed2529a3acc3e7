"""The paper's main tables, carried over exactly (accuracy in %, as printed):

- `tab:moderate_bias_summary` -- "Systemic Resilience under Moderate Advisory Injection" (main
  text), 5 models x 6 datasets;
- `tab:main_results_must_bias` -- "Systemic Resilience under Strong Corrupt Injection" (appendix
  C), 5 models x 6 datasets.

Each line: dataset, Ceiling (0c5t), then MAJ / RRMaj / Delta for 1c4t, 2c3t, 3c2t, 4c1t, then
Floor (5c0t). Setting: N = 5, K = 100, M = N = 5, 128 questions per dataset, corrupted agents'
seats and L not stated. The paper prints one number for Ceiling and Floor.

leaderboard/paper_seed.py seeds the leaderboard from these tables;
tests/rrdemo/report/paper/test_main_tables.py and tests/leaderboard/test_paper_seed.py check them
against the LaTeX cell by cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

MAIN_CONFIGS = ("1c4t", "2c3t", "3c2t", "4c1t")
MAIN_LABELS = {"moderate": "tab:moderate_bias_summary", "strong": "tab:main_results_must_bias"}
# Dataset spellings of the two tables -> rrdemo task ids.
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

_TEXT = {"moderate": MODERATE_TABLE, "strong": STRONG_TABLE}


@dataclass(frozen=True)
class MainLine:
    """One printed line of a main table: one model on one dataset under one strength, in %."""

    strength: str
    model: str  # the paper's name (a key of MODEL_IDS)
    printed_dataset: str  # as printed ("Logic-3" in one block of the strong table)
    ceiling: float
    maj: tuple[float, float, float, float]  # 1c4t, 2c3t, 3c2t, 4c1t
    rrmaj: tuple[float, float, float, float]
    delta: tuple[float, float, float, float]
    floor: float

    @property
    def dataset(self) -> str:
        return DATASET_IDS[self.printed_dataset]


@cache
def main_lines(strength: str) -> tuple[MainLine, ...]:
    """The lines of the `strength` ("moderate" or "strong") table, in printed order."""
    lines = []
    model = ""
    for raw in _TEXT[strength].strip().splitlines():
        if raw.endswith(":"):
            model = raw[:-1]
            continue
        cells = raw.split()
        values = [float(c) for c in cells[1:]]
        maj, rrmaj, delta = (values[1 + j : 13 : 3] for j in range(3))
        lines.append(
            MainLine(
                strength,
                model,
                cells[0],
                values[0],
                (maj[0], maj[1], maj[2], maj[3]),
                (rrmaj[0], rrmaj[1], rrmaj[2], rrmaj[3]),
                (delta[0], delta[1], delta[2], delta[3]),
                values[13],
            )
        )
    return tuple(lines)
