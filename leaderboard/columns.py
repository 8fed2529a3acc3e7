"""The board's columns, declared once (like the Hugging Face leaderboard template's ColumnContent).

Each `Column` says where its value comes from (an attribute of the ORM tables in
`leaderboard.orm`, or derived from the other columns), how the board table heads and shows it,
and whether the CSV and `python -m leaderboard list --format table` carry it. Everything that
shows a result row is built from `COLUMNS`, in its order: `BoardRow` (its stored columns are the
fields), the query of `leaderboard.service.board_rows`, the board table and the CSV of
`leaderboard.present`, and the CLI's table and JSON. No database and no UI here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from typing import Any, Literal

from rrdemo.report.submission import ESTIMATORS, AgentCounts
from rrdemo.tasks.generated import BEYOND_THE_PAPER, generated_steps

Display = Literal["plain", "text", "percent", "ratio", "stated", "estimator"]
REQUIRED = object()  # a stored column every row has (no default in BoardRow)

# The fewest questions a row may stand on to be ranked. At 40 questions the 95% interval of an
# accuracy is at most about +-15 points wide (Wilson, at 50%); at 20 it is +-20 and at 7 (the
# old-prompt sweep's rows) +-30, wider than the gains the board ranks (docs/leaderboard.md,
# "Which rows are ranked"). 40 is also the fewest questions any config of this project's
# evidence runs has.
MIN_QUESTIONS = 40
CURRENT = "current"  # the standing of a row the ranking reads


@dataclass(frozen=True)
class Column:
    """One column: its name (a `BoardRow` attribute, a CSV header, a JSON key) and its views."""

    name: str
    type: Any  # the Python type of its value
    stored: str | None  # "<table>.<attribute>" it is read from; None: derived from the others
    label: str | None = None  # header in the board table; None: not in the table
    # text: submitted text, escaped; percent: a fraction as %; ratio; stated: a run setting the
    # row may leave unstated, shown as "-" when null; estimator: its name in words
    display: Display = "plain"
    csv: bool = True  # in the CSV download (and always in `list --format json`)
    cli: bool = False  # in `python -m leaderboard list --format table`
    default: Any = REQUIRED  # BoardRow's default for a field a row may lack
    attribute: str = ""  # the BoardRow attribute when it is not `name`

    @property
    def attr(self) -> str:
        """The `BoardRow` attribute holding the value."""
        return self.attribute or self.name

    def value(self, row: Any) -> Any:
        """The raw value of `row` (fractions; derived floats rounded to 6 digits)."""
        value = getattr(row, self.attr)
        if self.stored is None and isinstance(value, float):
            return round(value, 6)
        return value


COLUMNS: tuple[Column, ...] = (
    Column("model", str, "results.model", "model", "text", cli=True),
    Column("model_revision", str | None, "results.model_revision", default=None),
    Column("dataset", str, "results.dataset"),
    Column("dataset_label", str, None, "dataset", cli=True),
    Column("strength", str, "results.strength", "strength", cli=True),
    Column("config", str, None, "config", csv=False, cli=True, attribute="label"),
    Column("rho", float, None, "rho", "ratio", cli=True),
    Column("maj_accuracy", float | None, "results.maj_accuracy", "MAJ %", "percent", cli=True),
    Column(
        "rrmaj_accuracy", float | None, "results.rrmaj_accuracy", "RRMaj %", "percent", cli=True
    ),
    Column("delta", float | None, None, "Delta %", "percent", cli=True),
    Column("n_questions", int, "results.n_questions", "questions", cli=True),
    Column(
        "estimator", str | None, "results.estimator", "estimator", "estimator", cli=True,
        default=None,
    ),
    Column("maj_ci_lo", float | None, "results.maj_ci_lo", default=None),
    Column("maj_ci_hi", float | None, "results.maj_ci_hi", default=None),
    Column("rrmaj_ci_lo", float | None, "results.rrmaj_ci_lo", default=None),
    Column("rrmaj_ci_hi", float | None, "results.rrmaj_ci_hi", default=None),
    Column("n_agents", int, "results.n_agents", "N"),
    Column("n_corrupted", int, "results.n_corrupted"),
    Column("n_honest", int, "results.n_honest"),
    Column("k", int, "results.k", "K", cli=True),
    Column("m", int, "results.m", "M", cli=True),
    # the run's settings beyond the paper that a row may leave unstated ("-" on the board)
    *(
        Column(name, str | None, f"results.{name}", label, "stated", cli=True, default=None)
        for name, label in (("prompt_style", "prompt style"), ("eos_policy", "EOS policy"))
    ),
    Column("max_tokens", int | None, "results.max_tokens"),
    Column("source", str, "submissions.source", "source", cli=True),
    Column(
        "provenance", str | None, "submissions.provenance", "study or log", "stated", default=None
    ),
    Column("standing", str, None, "standing", cli=True),
    Column("superseded", str | None, "results.superseded", default=None),
    Column("submitter", str, "submissions.submitter", "submitter", "text", cli=True),
    Column("notes", str, "submissions.notes"),
    Column("submission_id", int, "submissions.id", "submission", cli=True),
    Column("status", str, "submissions.status", cli=True),
    Column("config_hash", str, "results.config_hash", default=""),
    # the paired counts of a row of the run's decisions (what the ranking's intervals resample)
    Column("maj_only", int | None, "results.maj_only", default=None),
    Column("rrmaj_only", int | None, "results.rrmaj_only", default=None),
)  # fmt: skip
STORED_COLUMNS = tuple(c for c in COLUMNS if c.stored is not None)
BOARD_COLUMNS = tuple(c for c in COLUMNS if c.label is not None)
CSV_COLUMNS = tuple(c for c in COLUMNS if c.csv)
CLI_COLUMNS = tuple(c for c in COLUMNS if c.cli)


class _Derived(AgentCounts):
    """The derived columns, computed from a row's stored ones (rho and config from `AgentCounts`)."""

    dataset: str
    maj_accuracy: float | None
    rrmaj_accuracy: float | None
    n_questions: int
    estimator: str | None
    superseded: str | None

    @property
    def beyond_the_paper(self) -> bool:
        """Whether the row is on a generated task (arith1..arith12), not one of the paper's six."""
        return generated_steps(self.dataset) is not None

    @property
    def dataset_label(self) -> str:
        """The dataset as the board shows it: "arith2 (generated, beyond the paper)" for a
        generated task, the name alone for the paper's."""
        return f"{self.dataset} ({BEYOND_THE_PAPER})" if self.beyond_the_paper else self.dataset

    @property
    def standing(self) -> str:
        """Whether the ranking reads the row ("current"), or why not: superseded (with the
        reason), fewer than `MIN_QUESTIONS` questions, or no estimator stated."""
        if self.superseded:
            return f"superseded: {self.superseded}"
        if self.estimator is None:
            return "not ranked: estimator not stated"
        if self.n_questions < MIN_QUESTIONS:
            return f"not ranked: {self.n_questions} questions (< {MIN_QUESTIONS})"
        return CURRENT

    @property
    def ranked(self) -> bool:
        """Whether the ranking reads the row."""
        return self.standing == CURRENT

    @property
    def estimator_name(self) -> str:
        """The estimator in words ("run's decisions", "pool draws"; "not stated")."""
        return ESTIMATORS.get(self.estimator or "", "not stated")

    @property
    def delta(self) -> float | None:
        """RRMaj - MAJ accuracy, when the row has both."""
        if self.maj_accuracy is None or self.rrmaj_accuracy is None:
            return None
        return self.rrmaj_accuracy - self.maj_accuracy


BoardRow = make_dataclass(
    "BoardRow",
    [
        (c.name, c.type, field() if c.default is REQUIRED else field(default=c.default))
        for c in STORED_COLUMNS
    ],
    bases=(_Derived,),
    frozen=True,
    kw_only=True,
)
BoardRow.__module__ = __name__
BoardRow.__doc__ = (
    "One result row as the board shows it (flattened with its submission's metadata): a frozen "
    "dataclass whose keyword fields are the stored columns, with the derived ones as properties."
)
