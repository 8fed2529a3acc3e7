"""Submitting a finished sweep from the Experiments tab, under the leaderboard's one rule.

The log submitted is the one this session's sweep wrote (held in a `gr.State` on the server), never
a file or path a client sends. On a Space the submitter must sign in and is credited as that login
(`leaderboard.hub_sync.submit_as`, the Leaderboard tab's rule); elsewhere the typed name stands.
"""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from leaderboard.hub_sync import SIGN_IN, Store, submit_as
from rrdemo.backends.hardware import on_space
from rrdemo.errors import RRError
from rrdemo.report.submission_builder import build_submission
from ui.errors import user_error


def submit_sweep(
    store: Store | None,
    log_path: str | None,
    submitter: str,
    username: str | None = None,
    space: bool = False,
) -> str:
    """One click after a sweep: its log becomes a leaderboard submission (pending approval).

    `store` is the leaderboard app.py opened once (None when it could not be opened); `log_path`
    the log this session's sweep wrote; `username` the signed-in user on a Space.
    """
    if store is None:
        raise RRError("the leaderboard is not available on this server; export the sweep instead")
    if not log_path:
        raise RRError("run a sweep first: there is no sweep log to submit")
    if space and not username:
        raise RRError(SIGN_IN)
    name = username if space else (submitter or "").strip()
    if not name:
        raise RRError("type your name (1-100 characters) so the leaderboard can show who submitted")
    try:
        submission = build_submission(
            log_path, name, notes="submitted from the app's Experiments tab"
        )
    except RRError as exc:  # its message names the log's server path: show the file name only
        raise RRError(str(exc).replace(str(log_path), Path(log_path).name)) from None
    return submit_as(store, submission, username, space).message


def build_submit_row(leaderboard: Store | None, sweep_log: gr.State) -> None:
    """The name box (off a Space), the submit button and its result, under the sweep."""
    space = on_space()
    with gr.Row():
        submitter = gr.Textbox(
            label="Your name (shown on the leaderboard)", scale=3, visible=not space
        )
        button = gr.Button("Submit this sweep to the leaderboard", scale=2)
    if space:
        gr.Markdown(SIGN_IN)
    status = gr.Markdown("")

    def submit(path: str | None, name: str, username: str | None = None) -> str:
        try:
            return submit_sweep(leaderboard, path, name, username, space)
        except Exception as exc:
            raise user_error(exc, "submission") from None

    if space:  # gradio fills `profile` from the signed-in session

        def submit_signed_in(path: str | None, name: str, profile: gr.OAuthProfile | None) -> str:
            return submit(path, name, profile.username if profile else None)

        button.click(submit_signed_in, [sweep_log, submitter], status, api_name="submit_sweep")
    else:
        button.click(submit, [sweep_log, submitter], status, api_name="submit_sweep")
