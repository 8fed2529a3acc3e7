"""The Leaderboard tab: browse, filter and download the board, submit a file, moderate.

`build_leaderboard_tab(store)` is called inside an open `gr.Blocks()` / `gr.Tab` by app.py with
the leaderboard app.py opened once (`leaderboard.hub_sync.open_store`). Building the tab reads
nothing: the board is loaded when the page loads; the moderation queue only for an admin (its
names and notes are not public). The callbacks only read inputs, call `leaderboard` functions and
format outputs; table cells show submitted strings as text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from leaderboard import hub_sync, present, service
from leaderboard.columns import BOARD_COLUMNS, MIN_QUESTIONS, Column
from leaderboard.db import run_transaction
from leaderboard.ranking import (
    POOLED_ESTIMATOR,
    RHO_BANDS,
    TASK_FAMILIES,
    filter_rows,
    pooled_lines,
    rank_models,
)
from rrdemo.backends.hardware import on_space
from rrdemo.errors import RRError
from rrdemo.report.submission import (
    ALL_SOURCES,
    DATASETS,
    MAX_FILE_BYTES,
    SCHEMA_VERSION,
    STRENGTHS,
    SubmissionRejected,
    parse_submission,
)
from rrdemo.settings import whole_number
from rrdemo.tasks import GENERATED_TASKS
from rrdemo.tasks.generated import BEYOND_THE_PAPER
from ui.layout import legend_below
from ui.queue_limits import client_key
from ui.scratch import publish
from ui.uploads import discard

INTRO = f"""\
### Robustness leaderboard: MAJ vs RRMaj under adversarial majorities
Every row says what it stands on: its **questions**, its **estimator** (*run's decisions*: each
question's MAJ and RRMaj vote as the run cast it, the numbers the Arena and the report's paired
table show; *pool draws*: the mean over draws from each question's answers, as the paper's
tables), its **source** (*paper*: *The Consensus Trap*; *rrdemo*: this project's own runs) and
the **study or log** that made it. Ranking: mean RRMaj accuracy under majority corruption
(rho >= 0.6); gain = mean Delta there; robustness tax = mean Delta for 0 < rho <= 0.4;
asymmetric yield = gain + tax; equal scores share a rank (=2). Where a model's rows are the run's
decisions, RRMaj - MAJ is not averaged over rows: it is the pooled line per config below the
rankings (each question counted once, the questions resampled within each run; the README's
pooled row), and a row that may stand on another's questions is shown, not averaged or pooled.
Only current rows on at least
{MIN_QUESTIONS} questions with a stated estimator are ranked; superseded rows (with the reason)
are hidden unless you show them, and never ranked. Rows on the generated tasks
{GENERATED_TASKS} are beyond the paper: labelled so, and ranked apart. `-` marks a setting a
row does not state. New submissions appear after an admin approves them.
"""

PROVENANCE = next(c.label for c in BOARD_COLUMNS if c.name == "provenance")
PROJECT_FILES = "https://huggingface.co/spaces/{space}/blob/main/{path}"
RANKING_LABEL = "Ranking per model on the paper's tasks"
GENERATED_LABEL = f"Ranking per model on the generated tasks ({BEYOND_THE_PAPER}), ranked apart"
POOLED_LABEL = (
    "RRMaj - MAJ per model and config, pooled over independent runs (rows of the run's "
    f"decisions, every task: {POOLED_ESTIMATOR})"
)


ACTIONS = ("approve", "reject", "delete", "supersede")


def submit_file(store: hub_sync.Store, path: str | None, username: str | None, space: bool) -> str:
    """Check and store one uploaded file; on a Space it is credited to the signed-in user."""
    if not path:
        return "Choose a submission file (.json) first."
    if space and not username:
        return hub_sync.SIGN_IN
    if not os.path.isfile(path):
        return "Choose a submission file (.json) first: the last one was used and deleted."
    try:
        if os.path.getsize(path) > MAX_FILE_BYTES:
            return f"Rejected:\nthe file is larger than the limit of {MAX_FILE_BYTES} bytes"
        data = Path(path).read_bytes()
    finally:
        discard(path)  # read (or refused): the upload is not kept on the server
    try:
        submission = parse_submission(data)
        return hub_sync.submit_as(store, submission, username, space).message
    except SubmissionRejected as error:
        return "Rejected:\n" + "\n".join(error.reasons)
    except RRError as error:
        return str(error)


def _rows(store: hub_sync.Store, *filters: Any) -> list:
    """The approved rows under the tab's filters: dataset, strength, rho band, source and
    (optional) whether superseded rows are shown."""
    dataset, strength, band, source, *shown = filters
    rows = run_transaction(store.factory, service.board_rows)
    return filter_rows(
        rows,
        dataset=dataset,
        strength=strength,
        rho_band=band,
        source=source,
        superseded=bool(shown and shown[0]),
    )


def _code(text: str) -> str:
    """Text shown verbatim in a markdown cell: a code span (no link, no markup inside it)."""
    return "`" + text.replace("`", "'").replace("\n", " ") + "`"


def provenance_cell(row: Any, space: str | None) -> str:
    """The "study or log" cell: on a Space, a link to the file of this project's own rows (a
    path in the Space's repository); anything else, a submitter's words included, verbatim."""
    text = row.provenance or present.UNSTATED
    if space and row.source == "rrdemo" and re.fullmatch(r"[\w./-]+", text):
        return f"[{text}]({PROJECT_FILES.format(space=space, path=text)})"
    return _code(text)


def board_table(rows: list) -> Any:
    """The row table as the tab shows it: every cell filled, the source study linked."""
    frame = present.board_frame(rows)
    space = os.environ.get("SPACE_ID")
    frame[PROVENANCE] = [provenance_cell(row, space) for row in rows]
    return frame


def _chart(rows: list) -> Any:
    """The accuracy chart, its legend under it (one line per entry on a phone)."""
    figure = present.accuracy_figure(rows)
    return legend_below(figure, rows=len(figure.data) + 1)


def refresh(store: hub_sync.Store, *filters: Any) -> tuple:
    """The ranking on the paper's tasks, the row table and the chart for the rows under
    `filters` (as `_rows` takes them), then the ranking on the generated tasks and the pooled
    lines."""
    rows = _rows(store, *filters)
    scores = rank_models(rows)
    paper, generated = (present.ranking_frame(scores, family) for family in TASK_FAMILIES)
    return (
        present.readable(paper),
        board_table(rows),
        _chart(rows),
        present.readable(generated),
        present.readable(present.pooled_frame(pooled_lines(rows))),
    )


def download(
    store: hub_sync.Store,
    dataset: str,
    strength: str,
    band: str,
    source: str,
    folder: Path | None = None,
    superseded: bool = False,
) -> str:
    """The filtered rows as a CSV file; returns its path. The file is named by its content in
    gradio's folder (`ui.scratch.publish`, `folder` in tests): asking again for the same rows
    hands out the same file, and the upload sweep deletes it."""
    rows = _rows(store, dataset, strength, band, source, superseded)
    return publish(present.csv_text(rows).encode("utf-8"), "leaderboard.csv", folder)


def pending(
    store: hub_sync.Store, token: str | None, user: str | None = None, client: str = ""
) -> tuple[str, Any]:
    """The moderation queue for an admin (a message and an empty table for anyone else);
    `client` is who asks (wrong tokens pause that client only)."""
    try:
        subs = hub_sync.pending_for_admin(store, token, user, client)
    except RRError as error:
        return str(error), present.pending_frame([])
    return f"{len(subs)} submissions wait for approval.", present.pending_frame(subs)


SUBMISSION_NUMBER = (
    "Enter a submission number: a whole number, 1 or more, as the pending list shows it."
)


def _submission_number(value: float | str | None) -> int:
    """The submission number typed in the admin panel; RRError says what is allowed."""
    top = service.MAX_SUBMISSION_ID
    try:
        number = whole_number(value, "submission number", minimum=1)
    except RRError:
        number = 0
    if not 1 <= number <= top:
        raise RRError(SUBMISSION_NUMBER)
    return number


def moderate(
    store: hub_sync.Store,
    action: str,
    token: str,
    submission_id: float | None,
    reason: str,
    user: str | None = None,
    client: str = "",
) -> tuple[str, Any]:
    """One admin action; returns its message and, for an admin, the refreshed queue."""
    try:
        number = _submission_number(submission_id)
        message = hub_sync.moderate_recorded(
            store, number, action, token, reason or "", username=user, client=client
        )
    except RRError as error:
        return str(error), present.pending_frame([])
    return message, pending(store, token, user, client)[1]


def _submitter(store: hub_sync.Store, space: bool) -> Callable[..., str]:
    """The submit callback; on a Space gradio fills `profile` from the signed-in session."""
    if space:

        def submit(path: str | None, profile: gr.OAuthProfile | None) -> str:
            return submit_file(store, path, profile.username if profile else None, True)

        return submit

    def submit_here(path: str | None) -> str:
        return submit_file(store, path, None, False)

    return submit_here


def _moderator(store: hub_sync.Store, space: bool, action: str) -> Callable[..., tuple[str, Any]]:
    """The callback of one admin button ("pending" lists the queue); on a Space a listed admin
    needs no token."""

    def act(token, submission_id, reason, user=None, request=None) -> tuple[str, Any]:
        http = getattr(request, "request", None)  # gr.Request wraps the server's request
        client = client_key(http) if http is not None else ""
        if action == "pending":
            return pending(store, token, user, client)
        return moderate(store, action, token, submission_id, reason, user, client)

    if space:

        def act_signed_in(
            token, submission_id, reason, profile: gr.OAuthProfile | None, request: gr.Request
        ):
            user = profile.username if profile else None
            return act(token, submission_id, reason, user, request)

        return act_signed_in

    def act_here(token, submission_id, reason, request: gr.Request):
        return act(token, submission_id, reason, None, request)

    return act_here


@dataclass(frozen=True)
class _Board:
    filters: list[Any]  # dataset, strength, rho band, source, show superseded
    views: list[Any]  # paper-task ranking, rows, chart (the refresh API's outputs)
    later: list[Any]  # the generated tasks' ranking, the pooled lines
    csv_button: Any
    csv_file: Any


@dataclass(frozen=True)
class _Admin:
    inputs: list[Any]
    buttons: dict[str, Any]
    status: Any
    queue: Any


def _board() -> _Board:
    with gr.Row():
        dataset = gr.Dropdown(["all", *DATASETS], value="all", label="dataset")
        strength = gr.Dropdown(["all", *STRENGTHS], value="all", label="strength")
        band = gr.Dropdown(list(RHO_BANDS), value="all", label="rho band")
        source = gr.Dropdown(["all", *ALL_SOURCES], value="all", label="source")
        superseded = gr.Checkbox(
            value=False, label="show superseded rows (labelled, never ranked)", elem_id="lb-old"
        )
    ranked = {"interactive": False, "wrap": True, "headers": present.RANKING_COLUMNS}
    ranked["column_widths"] = _widths(present.RANKING_COLUMNS)
    ranking = gr.Dataframe(label=RANKING_LABEL, elem_id="lb-ranking", **ranked)
    generated = gr.Dataframe(label=GENERATED_LABEL, elem_id="lb-generated", **ranked)
    pooled = gr.Dataframe(
        label=POOLED_LABEL,
        elem_id="lb-pooled",
        interactive=False,
        wrap=True,
        headers=present.POOLED_COLUMNS,
        column_widths=_widths(present.POOLED_COLUMNS),
    )
    chart = gr.Plot(label="MAJ (dashed) vs RRMaj (solid) accuracy against rho")
    board = gr.Dataframe(
        label="Result rows (by submission; the source study or log in its own column)",
        interactive=False,
        wrap=True,  # a long model name wraps on its words instead of ending in "..."
        max_height=600,
        datatype=[_datatype(c) for c in BOARD_COLUMNS],
        headers=[str(c.label) for c in BOARD_COLUMNS],
        column_widths=_widths([str(c.label) for c in BOARD_COLUMNS]),
        elem_id="lb-rows",
    )
    with gr.Row():
        csv_button = gr.Button("Download CSV of the filtered rows")
        csv_file = gr.File(label="CSV", interactive=False)
    return _Board(
        [dataset, strength, band, source, superseded],
        [ranking, board, chart],
        [generated, pooled],
        csv_button,
        csv_file,
    )


def _datatype(column: Column) -> str:
    """How the page shows a row column: numbers as numbers, the source study as a link."""
    if column.label == PROVENANCE:
        return "markdown"
    numeric = column.display in ("percent", "ratio") or column.type in (int, float)
    return "number" if numeric else "str"


# Columns whose values run long; the others are as wide as their header's longest word.
WIDE = {
    "model": 260, "standing": 230, "study or log": 360, "submitter": 150, "tasks": 170,
    "estimator": 150, "tasks pooled": 230, "studies or logs": 360, "not pooled": 360,
    "verdict": 200, "intervals": 200, "rows not averaged": 200,
}  # fmt: skip


MIN_WIDTH = 72  # px: "100.0" or "6,400" and the column menu's button, never "1..."


def _width(label: str | None) -> str:
    """A column at least as wide as its header's longest word, so a header never breaks into a
    letter a line when the filtered rows leave its column short (or empty)."""
    longest = max(len(word) for word in str(label).split())
    whole = min(9 * len(str(label)) + 28, 130)  # on one line up to 130 px, else on words
    # at least room for a number of 5 digits beside the header's menu button
    return f"{WIDE.get(str(label), max(9 * longest + 28, whole, MIN_WIDTH))}px"


def _widths(labels: list[str]) -> list[str]:
    return [_width(label) for label in labels]


def _submit_form(space: bool) -> tuple[Any, Any, Any]:
    with gr.Accordion("Submit results", open=False):
        if space:
            gr.LoginButton()
            gr.Markdown(hub_sync.SIGN_IN)
        gr.Markdown(
            f"Upload a JSON file made by `rrdemo export RUN.jsonl` (schema version "
            f"{SCHEMA_VERSION}, at most 1 MiB, UTF-8). It is checked now and listed after an "
            "admin approves it."
        )
        upload = gr.File(label="submission file", file_types=[".json"], type="filepath")
        button = gr.Button("Submit", variant="primary")
        status = gr.Textbox(label="result", lines=4, interactive=False)
    return upload, button, status


def _admin_panel(space: bool) -> _Admin:
    with gr.Accordion("Admin", open=False):
        if space:
            gr.Markdown("Admins listed in `LEADERBOARD_ADMINS` only need to be signed in.")
        token = gr.Textbox(label="admin token", type="password")
        with gr.Row():
            submission_id = gr.Number(label="submission #", precision=0)
            reason = gr.Textbox(label="reason (recorded)")
        with gr.Row():
            buttons = {
                "pending": gr.Button("Show pending"),
                "approve": gr.Button("Approve"),
                "reject": gr.Button("Reject"),
                "delete": gr.Button("Delete", variant="stop"),
                "supersede": gr.Button("Mark superseded (reason shown)"),
            }
        status = gr.Textbox(label="admin result", interactive=False)
        queue = gr.Dataframe(label="Pending submissions", interactive=False, wrap=True)
    return _Admin([token, submission_id, reason], buttons, status, queue)


def build_leaderboard_tab(store: hub_sync.Store) -> None:
    """Add the leaderboard's components and events to the enclosing Blocks context.

    On a Space (`SPACE_ID` set) a "Sign in with Hugging Face" button credits submissions to the
    signed-in user and lets listed admins (`LEADERBOARD_ADMINS`) moderate without the token;
    elsewhere the submitter is the file's free-text field.
    """
    space = on_space()
    gr.Markdown(INTRO)
    board = _board()
    upload, submit_button, submit_status = _submit_form(space)
    admin = _admin_panel(space)

    def show(dataset: str, strength: str, band: str, source: str, superseded: bool = False):
        return refresh(store, dataset, strength, band, source, superseded)[:3]

    def show_generated(dataset: str, strength: str, band: str, source: str, superseded: bool):
        return refresh(store, dataset, strength, band, source, superseded)[3:]

    def csv_file(dataset: str, strength: str, band: str, source: str, superseded: bool) -> str:
        return download(store, dataset, strength, band, source, superseded=superseded)

    filters, views = board.filters, board.views
    private = {"api_visibility": "private"}
    gr.on([d.change for d in filters], show, filters, views, api_name="leaderboard_refresh").then(
        show_generated, filters, board.later, **private
    )
    board.csv_button.click(csv_file, filters, board.csv_file, api_name="leaderboard_csv")
    submitted = submit_button.click(
        _submitter(store, space), upload, submit_status, api_name="leaderboard_submit"
    )
    # the file was read and deleted: the form lets go of it, so a second Submit asks for a file
    submitted.then(lambda: None, None, upload, queue=False, **private)
    submitted.then(show, filters, views, **private).then(
        show_generated, filters, board.later, **private
    )
    for action in ("pending", *ACTIONS):
        admin.buttons[action].click(
            _moderator(store, space, action),
            inputs=admin.inputs,
            outputs=[admin.status, admin.queue],
            api_name=f"leaderboard_{action}",
        ).then(show, filters, views, **private).then(
            show_generated, filters, board.later, **private
        )
    page = gr.context.Context.root_block
    if page is not None:  # the board is read when the page loads, not now
        page.load(show, inputs=filters, outputs=views, **private).then(
            show_generated, filters, board.later, **private
        )
