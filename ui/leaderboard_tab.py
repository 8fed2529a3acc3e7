"""The Leaderboard tab: browse, filter and download the board, submit a file, moderate.

`build_leaderboard_tab()` is called inside an open `gr.Blocks()` / `gr.Tab` by app.py. The
callbacks only read inputs, call `leaderboard` functions and format outputs; every submitted
string is escaped by `leaderboard.present` before it is shown.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import gradio as gr

from leaderboard import hub_sync, present, service
from leaderboard.db import run_transaction
from leaderboard.ranking import RHO_BANDS, filter_rows, rank_models
from leaderboard.schema import (
    ALL_SOURCES,
    DATASETS,
    MAX_FILE_BYTES,
    STRENGTHS,
    SubmissionRejected,
    parse_submission,
)
from rrdemo.errors import RRError
from rrdemo.hardware import on_space

INTRO = """\
### Robustness leaderboard: MAJ vs RRMaj under adversarial majorities
Rows marked **paper** are the numbers reported in *The Consensus Trap* (moderate: main table;
strong: appendix C). Ranking: mean RRMaj accuracy under majority corruption (rho >= 0.6); gain =
mean Delta there; robustness tax = mean Delta for 0 < rho <= 0.4; asymmetric yield = gain + tax.
New submissions appear after an admin approves them.
"""


SIGN_IN = "Sign in with Hugging Face (the button above) to submit: results carry your username."


def submit_file(store: hub_sync.Store, path: str | None, username: str | None, space: bool) -> str:
    """Check and store one uploaded file; on a Space it is credited to the signed-in user."""
    if not path:
        return "Choose a submission file (.json) first."
    if space and not username:
        return SIGN_IN
    if os.path.getsize(path) > MAX_FILE_BYTES:
        return f"Rejected:\nthe file is larger than the limit of {MAX_FILE_BYTES} bytes"
    try:
        submission = parse_submission(Path(path).read_bytes())
        if space and username:
            submission = service.with_submitter(submission, username)
        return hub_sync.submit_recorded(store, submission).message
    except SubmissionRejected as error:
        return "Rejected:\n" + "\n".join(error.reasons)
    except RRError as error:
        return str(error)


def build_leaderboard_tab() -> None:
    """Add the leaderboard's components and events to the enclosing Blocks context.

    On a Space (`SPACE_ID` set) a "Sign in with Hugging Face" button credits submissions to the
    signed-in user and lets listed admins (`LEADERBOARD_ADMINS`) moderate without the token;
    elsewhere the submitter is the file's free-text field.
    """
    store = hub_sync.open_store()  # rebuilds from the journal; pushes it when configured
    factory = store.factory
    space = on_space()

    def refresh(dataset: str, strength: str, band: str, source: str):  # type: ignore[no-untyped-def]
        rows = run_transaction(factory, service.board_rows)
        rows = filter_rows(rows, dataset=dataset, strength=strength, rho_band=band, source=source)
        ranking = present.ranking_frame(rank_models(rows))
        return ranking, present.board_frame(rows), present.accuracy_figure(rows)

    def download(dataset: str, strength: str, band: str, source: str) -> str:
        rows = run_transaction(factory, service.board_rows)
        rows = filter_rows(rows, dataset=dataset, strength=strength, rho_band=band, source=source)
        folder = Path(tempfile.mkdtemp(prefix="leaderboard-"))
        return str(present.write_csv(rows, folder / "leaderboard.csv"))

    def pending():  # type: ignore[no-untyped-def]
        subs = run_transaction(factory, lambda s: service.list_submissions(s, status="pending"))
        return present.pending_frame(subs)

    def moderate(action: str, token: str, submission_id: float | None, reason: str, user=None):  # type: ignore[no-untyped-def]
        if submission_id is None:
            return "Enter a submission number.", pending()
        try:
            message = hub_sync.moderate_recorded(
                store, int(submission_id), action, token, reason or "", username=user
            )
        except RRError as error:
            message = str(error)
        return message, pending()

    if space:  # gradio fills `profile` from the signed-in session (None when signed out)

        def submit(path: str | None, profile: gr.OAuthProfile | None) -> str:
            return submit_file(store, path, profile.username if profile else None, True)

        def moderator(action: str):  # type: ignore[no-untyped-def]
            def act(token, submission_id, reason, profile: gr.OAuthProfile | None):  # type: ignore[no-untyped-def]
                user = profile.username if profile else None
                return moderate(action, token, submission_id, reason, user)

            return act

    else:

        def submit(path: str | None) -> str:
            return submit_file(store, path, None, False)

        def moderator(action: str):  # type: ignore[no-untyped-def]
            return lambda token, submission_id, reason: moderate(
                action, token, submission_id, reason
            )

    gr.Markdown(INTRO)
    with gr.Row():
        dataset = gr.Dropdown(["all", *DATASETS], value="all", label="dataset")
        strength = gr.Dropdown(["all", *STRENGTHS], value="all", label="strength")
        band = gr.Dropdown(list(RHO_BANDS), value="all", label="rho band")
        source = gr.Dropdown(["all", *ALL_SOURCES], value="all", label="source")
    ranking = gr.Dataframe(label="Ranking per model", interactive=False, wrap=True)
    chart = gr.Plot(label="MAJ (dashed) vs RRMaj (solid) accuracy against rho")
    board = gr.Dataframe(
        label="Result rows (click a header to sort)", interactive=False, max_height=600
    )
    with gr.Row():
        csv_button = gr.Button("Download CSV of the filtered rows")
        csv_file = gr.File(label="CSV", interactive=False)

    with gr.Accordion("Submit results", open=False):
        if space:
            gr.LoginButton()
            gr.Markdown(SIGN_IN)
        gr.Markdown(
            "Upload a JSON file made by `rrdemo export RUN.jsonl` (schema version 1, at most "
            "1 MiB, UTF-8). It is checked now and listed after an admin approves it."
        )
        upload = gr.File(label="submission file", file_types=[".json"], type="filepath")
        submit_button = gr.Button("Submit", variant="primary")
        submit_status = gr.Textbox(label="result", lines=4, interactive=False)

    with gr.Accordion("Admin", open=False):
        if space:
            gr.Markdown("Admins listed in `LEADERBOARD_ADMINS` only need to be signed in.")
        token = gr.Textbox(label="admin token", type="password")
        with gr.Row():
            submission_id = gr.Number(label="submission #", precision=0)
            reason = gr.Textbox(label="reason (recorded)")
        with gr.Row():
            approve = gr.Button("Approve")
            reject = gr.Button("Reject")
            delete = gr.Button("Delete", variant="stop")
        admin_status = gr.Textbox(label="admin result", interactive=False)
        queue = gr.Dataframe(label="Pending submissions", interactive=False, wrap=True)

    filters = [dataset, strength, band, source]
    views = [ranking, board, chart]
    gr.on(
        [d.change for d in filters],
        refresh,
        inputs=filters,
        outputs=views,
        api_name="leaderboard_refresh",
    )
    csv_button.click(download, inputs=filters, outputs=csv_file, api_name="leaderboard_csv")
    submit_button.click(
        submit, inputs=upload, outputs=submit_status, api_name="leaderboard_submit"
    ).then(refresh, inputs=filters, outputs=views, api_visibility="private")
    for button, action in ((approve, "approve"), (reject, "reject"), (delete, "delete")):
        button.click(
            moderator(action),
            inputs=[token, submission_id, reason],
            outputs=[admin_status, queue],
            api_name=f"leaderboard_{action}",
        ).then(refresh, inputs=filters, outputs=views, api_visibility="private")
    context = gr.context.Context.root_block
    if context is not None:
        context.load(refresh, inputs=filters, outputs=views, api_visibility="private")
        context.load(pending, outputs=queue, api_name="leaderboard_pending")
