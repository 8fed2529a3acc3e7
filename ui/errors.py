"""What a visitor sees when a callback fails: one plain line, escaped once, no server path.

Gradio shows an error's message as HTML, so the text is escaped here (and nowhere else): a name or
question the user typed comes back as text, never as a link, form or image. An unexpected error
shows neither its type nor its message (which may name server paths or code); both go to the log.
"""

from __future__ import annotations

import html
import logging

import gradio as gr

from rrdemo.errors import RRError

log = logging.getLogger(__name__)

OUT_OF_MEMORY = "out of memory: lower N, M or L, or pick a smaller model, and try again"
TOO_DEEP = "the input is nested too deeply to read; send a flatter one"


def plain(text: str) -> str:
    """`text` as inert HTML that shows the same characters."""
    return html.escape(text, quote=False)


def user_error(exc: BaseException, what: str = "run") -> gr.Error:
    """The `gr.Error` to raise for `exc`: an RRError's own message (written to be shown), a
    memory error's advice, a too-deep input's, or for anything else a pointer to the server log."""
    if isinstance(exc, RRError):
        text = str(exc)
    elif isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        text = OUT_OF_MEMORY
    elif isinstance(exc, RecursionError):
        text = TOO_DEEP
    else:
        log.error("the %s failed", what, exc_info=exc)
        text = f"the {what} failed on the server; the server log has the details"
    return gr.Error(plain(text), print_exception=False)
