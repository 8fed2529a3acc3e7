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
from leaderboard.db import open_leaderboard, run_transaction
from leaderboard.ranking import RHO_BANDS, filter_rows, rank_models
from leaderboard.schema import ALL_SOURCES, DATASETS, MAX_FILE_BYTES, STRENGTHS, SubmissionRejected
from rrdemo.errors import RRError

INTRO = """\
### Robustness leaderboard: MAJ vs RRMaj under adversarial majorities
Rows marked **paper** are the numbers reported in *The Consensus Trap* (moderate: main table;
strong: appendix C). Ranking: mean RRMaj accuracy under majority corruption (rho >= 0.6); gain =
mean Delta there; robustness tax = mean Delta for 0 < rho <= 0.4; asymmetric yield = gain + tax.
New submissions appear after an admin approves them.
"""


def build_leaderboard_tab() -> None:
    """Add the leaderboard's components and events to the enclosing Blocks context."""
    hub_sync.restore_from_hub()  # no-op unless LEADERBOARD_HF_DATASET_REPO is set
    factory = open_leaderboard()
    hub_sync.start_hub_sync()

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

    def submit_file(path: str | None) -> str:
        if not path:
            return "Choose a submission file (.json) first."
        if os.path.getsize(path) > MAX_FILE_BYTES:
            return f"Rejected:\nthe file is larger than the limit of {MAX_FILE_BYTES} bytes"
        raw = Path(path).read_bytes()
        try:
            return run_transaction(factory, lambda s: service.submit(s, raw)).message
        except SubmissionRejected as error:
            return "Rejected:\n" + "\n".join(error.reasons)
        except RRError as error:
            return str(error)

    def pending():  # type: ignore[no-untyped-def]
        subs = run_transaction(factory, lambda s: service.list_submissions(s, status="pending"))
        return present.pending_frame(subs)

    def moderate(action: str, token: str, submission_id: float | None, reason: str):  # type: ignore[no-untyped-def]
        if submission_id is None:
            return "Enter a submission number.", pending()
        try:
            message = run_transaction(
                factory,
                lambda s: service.moderate(s, int(submission_id), action, token, reason or ""),
            )
        except RRError as error:
            message = str(error)
        return message, pending()

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
        gr.Markdown(
            "Upload a JSON file made by `rrdemo export RUN.jsonl` (schema version 1, at most "
            "1 MiB, UTF-8). It is checked now and listed after an admin approves it."
        )
        upload = gr.File(label="submission file", file_types=[".json"], type="filepath")
        submit_button = gr.Button("Submit", variant="primary")
        submit_status = gr.Textbox(label="result", lines=4, interactive=False)

    with gr.Accordion("Admin", open=False):
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
        submit_file, inputs=upload, outputs=submit_status, api_name="leaderboard_submit"
    ).then(refresh, inputs=filters, outputs=views, api_visibility="private")
    for button, action in ((approve, "approve"), (reject, "reject"), (delete, "delete")):
        button.click(
            lambda t, i, r, a=action: moderate(a, t, i, r),
            inputs=[token, submission_id, reason],
            outputs=[admin_status, queue],
            api_name=f"leaderboard_{action}",
        ).then(refresh, inputs=filters, outputs=views, api_visibility="private")
    context = gr.context.Context.root_block
    if context is not None:
        context.load(refresh, inputs=filters, outputs=views, api_visibility="private")
        context.load(pending, outputs=queue, api_name="leaderboard_pending")
