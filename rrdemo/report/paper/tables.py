"""The paper's analysis tables (appendix D of "The Consensus Trap"), carried over exactly as data.

Accuracies are in percent, as printed. Each table is named by its LaTeX label:

- `SCALING` -- tab:app_ablation_scaling, "Extended Test-time compute scaling (M = 1 -> 40)
  averaged across 6 datasets (50 bootstrap trials)": MAJ, RRMaj and Delta(RRMaj - MAJ) at
  M = 1, 5, 10, 20, 30, 40 with the printed spread (+-), for 3c2t and 4c1t under both strengths,
  and the Delta(40 - 1) column.
- `SCALING_3C2T` -- tab:app_ablation_per_dataset, "Detailed Dataset Breakdown: 3c2t
  Configuration under imperative corruption": MAJ and RRMaj at M = 1 and M = 40 per dataset
  (strong injection), and the printed average.
- `FINAL_SPEAKER` -- tab:app_last_speaker, "Detailed Impact of the Final Speaker's Identity":
  Clean-Last vs Corrupt-Last accuracy (n trajectories), Delta = Clean - Corrupt and the two-sided
  Fisher p-value, for Llama-4-Scout-17B and Mistral-3.1-24B.
- `HETERO` -- tab:app_hetero_n3, tab:app_hetero_n5 and tab:app_hetero_diverse: heterogeneous
  ensembles (70B anchors with 8B models at N = 3, 5, 7; a diverse N = 5 ensemble), strong
  injection, MAJ, RRMaj and Gain averaged over GSM8K, Logic3 and Track3 (the paper prints no
  RRMaj at 0cNt: None here).
- `K_ABLATION` -- tab:app_k_ablation, "Ablation of token chunk size K on Llama-3-8B (N = M = 3,
  2 corrupted vs. 1 honest)": RRMaj accuracy per K on Logic7, Logic3, Track7 and their AVG.

What the paper does not state is left as None and said here, not guessed: the model(s) behind
the two M-scaling tables; the strength of the final-speaker and K-ablation tables; N, K and L of
most of them (the main setting is N = 5, K = 100; the M-scaling pools hold M* = 50 runs).
"""

from __future__ import annotations

from dataclasses import dataclass

from rrdemo.config import ct_label

SCALING_MS: tuple[int, ...] = (1, 5, 10, 20, 30, 40)  # columns of tab:app_ablation_scaling

# Paper model names -> Hugging Face hub ids (the leaderboard seed uses the same five; the 8B of
# the heterogeneous and K tables is Llama-3-8B, the gemma-12b of the diverse ensemble is unnamed).
MODEL_IDS: dict[str, str] = {
    "Llama-3.3-70B": "meta-llama/Llama-3.3-70B-Instruct",
    "Llama-4-Scout-17B": "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "Qwen2.5-32B": "Qwen/Qwen2.5-32B-Instruct",
    "Qwen3-30B": "Qwen/Qwen3-30B-A3B",
    "Mistral-3.1-24B": "mistralai/Mistral-Small-3.1-24B-Instruct-2503",
    "Llama-3-8B": "meta-llama/Meta-Llama-3-8B-Instruct",
}

# The models of the main tables (section 5 and appendix C), and the 8B of the ablations.
MAIN_MODELS: tuple[str, ...] = (
    "Llama-3.3-70B",
    "Llama-4-Scout-17B",
    "Mistral-3.1-24B",
    "Qwen2.5-32B",
    "Qwen3-30B",
)


def models_text() -> str:
    """The paper's models in one phrase, for the UI: every model of `MODEL_IDS` is named."""
    return (
        f"{', '.join(MAIN_MODELS)} in the main tables; Llama-3-8B in the K ablation and, with "
        "Llama-3.3-70B, the heterogeneous ensembles"
    )


LABELS = {
    "scaling": "tab:app_ablation_scaling",
    "scaling_3c2t": "tab:app_ablation_per_dataset",
    "final_speaker": "tab:app_last_speaker",
    "hetero_n3": "tab:app_hetero_n3",
    "hetero_n5": "tab:app_hetero_n5",
    "hetero_diverse": "tab:app_hetero_diverse",
    "k_ablation": "tab:app_k_ablation",
}


@dataclass(frozen=True)
class ScalingRow:
    """One method line of tab:app_ablation_scaling (mean over 6 datasets), values in %."""

    strength: str  # "strong" (the table's STRONG) or "moderate"
    config: str  # "3c2t" or "4c1t"
    method: str  # "MAJ", "RRMaj" or "Delta" (RRMaj - MAJ)
    mean: tuple[float, ...]  # at M = SCALING_MS
    std: tuple[float, ...] | None  # the printed +- (spread over 50 trials); None for Delta
    gain: float | None  # Delta(40 - 1); None for the Delta lines (printed "-")


# fmt: off
SCALING: tuple[ScalingRow, ...] = (
    ScalingRow("strong", "3c2t", "MAJ", (46.2, 22.2, 23.7, 25.3, 25.8, 25.9),
               (2.6, 1.0, 0.8, 0.7, 0.6, 0.6), -20.3),
    ScalingRow("strong", "3c2t", "RRMaj", (59.5, 67.7, 70.7, 73.6, 74.7, 74.9),
               (1.7, 1.2, 1.0, 1.0, 0.7, 0.2), 15.4),
    ScalingRow("strong", "3c2t", "Delta", (13.3, 45.5, 47.0, 48.3, 48.9, 49.0), None, None),
    ScalingRow("moderate", "3c2t", "MAJ", (77.8, 78.0, 78.2, 79.3, 79.5, 79.7),
               (1.9, 0.7, 0.6, 0.5, 0.4, 0.4), 1.9),
    ScalingRow("moderate", "3c2t", "RRMaj", (81.8, 88.1, 89.6, 90.4, 90.6, 90.6),
               (1.0, 0.6, 0.6, 0.5, 0.4, 0.1), 8.8),
    ScalingRow("moderate", "3c2t", "Delta", (4.0, 10.1, 11.4, 11.1, 11.1, 10.9), None, None),
    ScalingRow("strong", "4c1t", "MAJ", (29.9, 17.0, 16.9, 17.0, 17.1, 17.0),
               (2.1, 0.6, 0.6, 0.4, 0.4, 0.3), -12.9),
    ScalingRow("strong", "4c1t", "RRMaj", (40.3, 39.0, 37.0, 35.2, 34.4, 33.5),
               (1.4, 1.3, 1.2, 0.9, 0.6, 0.3), -6.8),
    ScalingRow("strong", "4c1t", "Delta", (10.4, 22.0, 20.1, 18.2, 17.3, 16.5), None, None),
    ScalingRow("moderate", "4c1t", "MAJ", (72.4, 73.2, 73.4, 74.2, 74.4, 74.4),
               (1.5, 0.7, 0.6, 0.4, 0.4, 0.4), 2.0),
    ScalingRow("moderate", "4c1t", "RRMaj", (75.3, 80.5, 81.9, 82.5, 83.0, 82.7),
               (1.2, 1.0, 0.6, 0.6, 0.6, 0.2), 7.4),
    ScalingRow("moderate", "4c1t", "Delta", (2.9, 7.3, 8.5, 8.4, 8.6, 8.3), None, None),
)
# fmt: on


@dataclass(frozen=True)
class DatasetScalingRow:
    """One line of tab:app_ablation_per_dataset: 3c2t, strong injection, values in %."""

    dataset: str  # rrdemo task id, or "all" for the printed Average line
    maj_m1: float
    maj_m40: float
    rrmaj_m1: float
    rrmaj_m40: float

    @property
    def config(self) -> str:
        return "3c2t"

    @property
    def strength(self) -> str:
        return "strong"


SCALING_3C2T: tuple[DatasetScalingRow, ...] = (
    DatasetScalingRow("aqua", 44.5, 25.8, 60.1, 71.0),
    DatasetScalingRow("gsm8k", 36.1, 6.8, 67.5, 87.5),
    DatasetScalingRow("logic7", 21.0, 5.1, 43.0, 50.8),
    DatasetScalingRow("logic3", 36.6, 23.8, 64.9, 83.4),
    DatasetScalingRow("math500", 42.6, 13.1, 56.4, 69.4),
    DatasetScalingRow("track7", 82.5, 80.7, 85.3, 86.3),
    DatasetScalingRow("all", 46.2, 25.9, 59.5, 74.9),
)
# Dataset ids -> the names the paper prints (for tables beside a run and for the LaTeX check).
PAPER_DATASET_NAMES: dict[str, str] = {
    "aqua": "AQuA",
    "gsm8k": "GSM8K",
    "logic7": "Logic7",
    "logic3": "Logic3",
    "math500": "MATH500",
    "track7": "Track7",
    "all": "Average",
}


@dataclass(frozen=True)
class PaperSpeakerRow:
    """One config of tab:app_last_speaker for one model: RR trajectories ended by an honest
    (Clean-Last) or a corrupted agent (Corrupt-Last), pooled over datasets; values in %."""

    model: str  # the paper's model name (a key of MODEL_IDS)
    config: str
    rho: float
    clean_acc: float
    clean_n: int
    corrupt_acc: float
    corrupt_n: int
    delta: float  # Clean - Corrupt, as printed
    p_value: float  # Fisher's exact test, two-sided


FINAL_SPEAKER: tuple[PaperSpeakerRow, ...] = (
    PaperSpeakerRow("Llama-4-Scout-17B", "1c4t", 0.2, 81.12, 1176, 82.69, 260, -1.57, 0.5978),
    PaperSpeakerRow("Llama-4-Scout-17B", "2c3t", 0.4, 75.75, 870, 78.45, 566, -2.70, 0.2498),
    PaperSpeakerRow("Llama-4-Scout-17B", "3c2t", 0.6, 71.68, 565, 70.84, 871, 0.84, 0.7657),
    PaperSpeakerRow("Llama-4-Scout-17B", "4c1t", 0.8, 65.41, 266, 66.50, 1170, -1.09, 0.7738),
    PaperSpeakerRow("Mistral-3.1-24B", "1c4t", 0.2, 70.39, 1074, 67.60, 250, 2.79, 0.4003),
    PaperSpeakerRow("Mistral-3.1-24B", "2c3t", 0.4, 57.41, 817, 59.50, 479, -2.09, 0.4841),
    PaperSpeakerRow("Mistral-3.1-24B", "3c2t", 0.6, 45.62, 548, 45.59, 748, 0.03, 1.0000),
    PaperSpeakerRow("Mistral-3.1-24B", "4c1t", 0.8, 34.77, 279, 33.33, 1017, 1.44, 0.6681),
)


@dataclass(frozen=True)
class HeteroEnsemble:
    """A heterogeneous ensemble of the appendix: its printed name and its members."""

    name: str  # as printed, e.g. "N3_2big1small"
    members: tuple[str, ...]  # "70B" / "8B" (Llama-3.3-70B / Llama-3-8B) or the diverse names
    description: str  # the parenthesis printed after the name
    label: str  # the LaTeX label of its table

    @property
    def n(self) -> int:
        return len(self.members)


HETERO_ENSEMBLES: dict[str, HeteroEnsemble] = {
    e.name: e
    for e in (
        HeteroEnsemble("N3_2big1small", ("70B",) * 2 + ("8B",), "2×70B, 1×8B", LABELS["hetero_n3"]),
        HeteroEnsemble("N3_2small1big", ("70B",) + ("8B",) * 2, "2×8B, 1×70B", LABELS["hetero_n3"]),
        HeteroEnsemble(
            "N5_3big2small", ("70B",) * 3 + ("8B",) * 2, "3×70B, 2×8B", LABELS["hetero_n5"]
        ),
        HeteroEnsemble("N5_1big4small", ("70B",) + ("8B",) * 4, "1×70B, 4×8B", LABELS["hetero_n5"]),
        HeteroEnsemble(
            "N5_diverse",
            ("llama-70b", "scout-17b", "mistral-24b", "gemma-12b", "llama-8b"),
            "70B, 17B, 24B, 12B, 8B",
            LABELS["hetero_diverse"],
        ),
        HeteroEnsemble(
            "N7_4big3small", ("70B",) * 4 + ("8B",) * 3, "4×70B, 3×8B", LABELS["hetero_diverse"]
        ),
    )
}
HETERO_DATASETS = "GSM8K, Logic3, Track3"  # what the heterogeneous tables average over


@dataclass(frozen=True)
class HeteroRow:
    """One corruption pattern of a heterogeneous ensemble (strong injection), values in %."""

    ensemble: str  # a key of HETERO_ENSEMBLES
    corrupted: tuple[str, ...]  # the corrupted members
    maj: float
    rrmaj: float | None  # None where the paper prints "--" (0cNt)
    gain: float | None  # RRMaj - MAJ as printed

    @property
    def n(self) -> int:
        return HETERO_ENSEMBLES[self.ensemble].n

    @property
    def config(self) -> str:
        c = len(self.corrupted)
        return ct_label(c, self.n - c)

    @property
    def pattern(self) -> str:
        """The printed corruption pattern, e.g. "1×70B+0×8B corrupt | 1×70B+1×8B clean"."""
        members = list(HETERO_ENSEMBLES[self.ensemble].members)
        if not set(members) <= {"70B", "8B"}:
            if not self.corrupted:
                return "0 corrupt"
            return f"corrupt=[{', '.join(self.corrupted)}]"
        for member in self.corrupted:
            members.remove(member)  # the clean members are what is left
        bad, good = list(self.corrupted), members
        return (
            f"{bad.count('70B')}×70B+{bad.count('8B')}×8B corrupt | "
            f"{good.count('70B')}×70B+{good.count('8B')}×8B clean"
        )


def _big_small(
    ensemble: str, big: int, small: int, maj: float, rrmaj: float | None, gain: float | None
) -> HeteroRow:
    """A line of the 70B / 8B ensembles: `big` 70B and `small` 8B members corrupted."""
    return HeteroRow(ensemble, ("70B",) * big + ("8B",) * small, maj, rrmaj, gain)


_DIVERSE = "N5_diverse"
# fmt: off
HETERO: tuple[HeteroRow, ...] = (
    # tab:app_hetero_n3
    _big_small("N3_2big1small", 0, 0, 100.0, None, None),
    _big_small("N3_2big1small", 0, 1, 97.2, 87.0, -10.2),
    _big_small("N3_2big1small", 1, 0, 75.9, 88.9, 13.0),
    _big_small("N3_2big1small", 1, 1, 52.8, 72.2, 19.4),
    _big_small("N3_2big1small", 2, 0, 13.9, 66.7, 52.8),
    _big_small("N3_2small1big", 0, 0, 83.3, None, None),
    _big_small("N3_2small1big", 0, 1, 79.6, 66.7, -13.0),
    _big_small("N3_2small1big", 1, 0, 62.0, 76.9, 14.8),
    _big_small("N3_2small1big", 0, 2, 68.5, 56.5, -12.0),
    _big_small("N3_2small1big", 1, 1, 31.5, 59.3, 27.8),
    # tab:app_hetero_n5
    _big_small("N5_3big2small", 0, 0, 97.2, None, None),
    _big_small("N5_3big2small", 0, 1, 100.0, 93.5, -6.5),
    _big_small("N5_3big2small", 1, 0, 92.6, 90.7, -1.9),
    _big_small("N5_3big2small", 0, 2, 99.1, 82.4, -16.7),
    _big_small("N5_3big2small", 2, 0, 60.2, 86.1, 25.9),
    _big_small("N5_3big2small", 1, 2, 61.1, 76.9, 15.7),
    _big_small("N5_3big2small", 3, 0, 13.0, 78.7, 65.7),
    _big_small("N5_3big2small", 2, 2, 26.9, 57.4, 30.6),
    _big_small("N5_3big2small", 3, 1, 10.2, 62.0, 51.9),
    _big_small("N5_1big4small", 0, 0, 84.3, None, None),
    _big_small("N5_1big4small", 0, 1, 84.3, 75.9, -8.3),
    _big_small("N5_1big4small", 1, 0, 67.6, 78.7, 11.1),
    _big_small("N5_1big4small", 0, 2, 70.4, 71.3, 0.9),
    _big_small("N5_1big4small", 1, 1, 63.0, 72.2, 9.3),
    _big_small("N5_1big4small", 0, 3, 67.6, 63.9, -3.7),
    _big_small("N5_1big4small", 1, 2, 50.0, 56.5, 6.5),
    _big_small("N5_1big4small", 0, 4, 45.4, 47.2, 1.9),
    _big_small("N5_1big4small", 1, 3, 35.2, 39.8, 4.6),
    # tab:app_hetero_diverse
    HeteroRow(_DIVERSE, (), 100.0, None, None),
    HeteroRow(_DIVERSE, ("llama-70b",), 100.0, 97.2, -2.8),
    HeteroRow(_DIVERSE, ("llama-8b",), 100.0, 97.2, -2.8),
    HeteroRow(_DIVERSE, ("gemma-12b", "llama-8b"), 98.1, 99.1, 0.9),
    HeteroRow(_DIVERSE, ("llama-70b", "scout-17b"), 95.4, 95.4, 0.0),
    HeteroRow(_DIVERSE, ("llama-70b", "scout-17b", "mistral-24b"), 64.8, 82.4, 17.6),
    HeteroRow(_DIVERSE, ("mistral-24b", "gemma-12b", "llama-8b"), 91.7, 89.8, -1.9),
    HeteroRow(_DIVERSE, ("llama-70b", "scout-17b", "mistral-24b", "gemma-12b"), 61.1, 70.4, 9.3),
    HeteroRow(_DIVERSE, ("scout-17b", "mistral-24b", "gemma-12b", "llama-8b"), 83.3, 72.2, -11.1),
    _big_small("N7_4big3small", 0, 0, 98.1, None, None),
    _big_small("N7_4big3small", 0, 1, 99.1, 97.2, -1.9),
    _big_small("N7_4big3small", 1, 0, 96.3, 95.4, -0.9),
    _big_small("N7_4big3small", 0, 3, 99.1, 82.4, -16.7),
    _big_small("N7_4big3small", 3, 0, 62.0, 90.7, 28.7),
    _big_small("N7_4big3small", 2, 2, 63.9, 80.6, 16.7),
    _big_small("N7_4big3small", 4, 0, 15.7, 80.6, 64.8),
    _big_small("N7_4big3small", 4, 1, 11.1, 71.3, 60.2),
    _big_small("N7_4big3small", 3, 3, 19.4, 53.7, 34.3),
)
# fmt: on


@dataclass(frozen=True)
class KRow:
    """One cell of tab:app_k_ablation: RRMaj accuracy (%) of Llama-3-8B, N = M = 3, 2c1t."""

    k: int
    dataset: str  # "logic7", "logic3", "track7", or "all" for the printed AVG column
    rrmaj: float

    @property
    def config(self) -> str:
        return "2c1t"


K_ABLATION_MODEL = "Llama-3-8B"
K_ABLATION_DATASETS = ("logic7", "logic3", "track7", "all")  # the printed column order
_K_TABLE = {  # K -> Logic7, Logic3, Track7, AVG (as printed)
    10: (6.8, 10.2, 11.8, 8.9),
    30: (10.5, 27.5, 28.2, 21.1),
    75: (18.8, 32.2, 44.5, 31.2),
    150: (19.0, 33.5, 48.8, 33.1),
    300: (21.8, 34.8, 44.8, 33.4),
    500: (21.2, 34.2, 41.5, 31.3),
}
K_ABLATION: tuple[KRow, ...] = tuple(
    KRow(k, dataset, value)
    for k, values in _K_TABLE.items()
    for dataset, value in zip(K_ABLATION_DATASETS, values, strict=True)
)
