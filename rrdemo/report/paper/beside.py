"""The paper's numbers beside a run's: the comparison rows, the notes, and their text.

The matching functions (rrdemo.report.paper.match, rrdemo.report.paper.settings) take what `rrdemo.report`
computes for a run and return a `BesideTable`: for every setting the run shares with one of the
paper's tables (matched on the keys that table has: dataset, config such as 3c2t, strength, M,
K, N), a "paper" line and the run's "this run" lines, values in percent. Nothing is matched
loosely: a run at K = 32 is not set beside the paper's K = 30. When nothing matches, the table
is empty and its note says what to run to get a match. Every table also says when the run's
model is not the paper's (nearly always, for a demo run: the paper used 8B-70B models).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from rrdemo.report.paper import tables as paper

PAPER, RUN = "paper", "this run"
EMPTY: Mapping[str, str] = MappingProxyType({})  # no served models (the default `weights`)
INTRO = (
    'Lines marked "paper" are the paper\'s printed numbers (each table named by its LaTeX label); '
    'lines marked "this run" are yours, matched on the keys each paper table has (dataset, '
    "config such as 3c2t, strength, M, K, N). Accuracies in %."
)


@dataclass(frozen=True)
class BesideRow:
    """One line: the matched key, where the numbers come from, and the values (%)."""

    key: tuple[str, ...]  # aligned with BesideTable.key_columns
    source: str  # PAPER or RUN
    who: str  # the paper's model / ensemble, or the run's ensemble (and its K)
    values: tuple[float | int | None, ...]  # aligned with value_columns (counts are ints)


@dataclass(frozen=True)
class BesideTable:
    """A paper table set beside a run: matched lines, what the paper's numbers are, a note."""

    name: str  # short id, e.g. "m_scaling"
    title: str
    labels: tuple[str, ...]  # the paper's LaTeX labels
    key_columns: tuple[str, ...]
    value_columns: tuple[str, ...]
    rows: tuple[BesideRow, ...]
    about: str  # what the paper's numbers are (model, N, K, M, datasets)
    note: str  # the model / setting differences, or what to run to get a match
    decimals: tuple[int, ...] = ()  # per value column; default 1

    def records(self) -> list[dict[str, Any]]:
        """One dict per line (for a DataFrame or CSV); values in %, None where not there."""
        out = []
        for row in self.rows:
            record: dict[str, Any] = {"table": self.name}
            record.update(zip(self.key_columns, row.key, strict=True))
            record.update(source=row.source, who=row.who)
            record.update(zip(self.value_columns, row.values, strict=True))
            out.append(record)
        return out


def percent(x: float | None) -> float | None:
    """A fraction as a percentage; None for a missing or NaN value."""
    return None if x is None or math.isnan(x) else 100 * x


def _seats(ensemble: str) -> list[str]:
    return [seat.rstrip("*").strip() for seat in ensemble.split(",")]


def is_heterogeneous(ensemble: str) -> bool:
    """An ensemble name with more than one model in its seats (see rrdemo.runs.spec.ensemble_name)."""
    return len(set(_seats(ensemble))) > 1


def model_note(
    run_ensembles: Iterable[str],
    paper_models: Sequence[str] | None,
    weights: Mapping[str, str] = EMPTY,
) -> str:
    """A line saying that the run's models are not the paper's, or "" when they all are.

    `paper_models` are the paper's names (keys of tables.MODEL_IDS); None when the paper does
    not name the model behind the table. `weights` maps served models to the hub ids they serve.
    """
    names = sorted(set(run_ensembles))
    seats = {weights.get(s, s).lower() for e in names for s in _seats(e)}
    if paper_models is None:
        return (
            f"This run used {', '.join(names)}; the paper does not name the model(s) behind "
            "this table (the paper's models are 8B-70B): compare the direction of the effect, not the "
            "level."
        )
    ids = {paper.MODEL_IDS[m].lower() for m in paper_models}
    if seats and seats <= ids:
        return ""
    return (
        f"This run used {', '.join(names)}, not the paper's {', '.join(paper_models)}: "
        "compare the direction of the effect, not the level."
    )


def make_table(
    name: str,
    title: str,
    labels: tuple[str, ...],
    keys: tuple[str, ...],
    values: tuple[str, ...],
    rows: Sequence[BesideRow],
    about: str,
    note: str,
    decimals: Sequence[int] = (),
) -> BesideTable:
    return BesideTable(name, title, labels, keys, values, tuple(rows), about, note, tuple(decimals))


def pct_at(values: dict[int, float], ms: Sequence[int]) -> list[float | None]:
    """The values (fractions, by M or K) at each of `ms` as percentages, None where missing."""
    return [percent(values[m]) if m in values else None for m in ms]


def corrupted_count(label: str) -> int:
    return int(label.split("c")[0])


def rho_text(label: str) -> str:
    c, t = corrupted_count(label), int(label.split("c")[1].rstrip("t"))
    return f"{c / (c + t):.1f}"


def no_match_note(paper_has: str, run_has: set[str], flags: str) -> str:
    shown = ", ".join(sorted(run_has)) or "nothing"
    return (
        f"No setting of this run matches: the paper's table has {paper_has}; this run has "
        f"{shown}. To compare, run e.g. `rrdemo experiment {flags}`."
    )


# -- text ---------------------------------------------------------------------------------------
def cell_text(value: float | int | None, decimals: int = 1, signed: bool = False) -> str:
    """A value as the tables print it (a difference with its sign); "–" where there is none."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value:+.{decimals}f}" if signed else f"{value:.{decimals}f}"


def beside_markdown(table: BesideTable) -> str:
    """A markdown section: title, the paper's labels and setting, the lines, the note."""
    head = (
        f"### {table.title}\n\nPaper: {', '.join(f'`{x}`' for x in table.labels)}; {table.about}."
    )
    if not table.rows:
        return f"{head}\n\n{table.note}"
    decimals = table.decimals or (1,) * len(table.value_columns)
    header = [*table.key_columns, "source", "who", *table.value_columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    signed = [c.startswith("Δ") for c in table.value_columns]
    for row in table.rows:
        source = f"**{row.source}**" if row.source == RUN else row.source
        cells = [
            cell_text(v, d, sign or "Delta" in row.key)
            for v, d, sign in zip(row.values, decimals, signed, strict=True)
        ]
        lines.append("| " + " | ".join([*row.key, source, row.who, *cells]) + " |")
    body = "\n".join(lines)
    return f"{head}\n\n{body}" + (f"\n\n{table.note}" if table.note else "")


def beside_csv(tables: Sequence[BesideTable]) -> str:
    """All lines of `tables` as one CSV (values in %, empty where not there)."""
    records = [record for table in tables for record in table.records()]
    columns = list(dict.fromkeys(column for record in records for column in record))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, restval="", lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: ("" if v is None else v) for k, v in record.items()})
    return buffer.getvalue()
