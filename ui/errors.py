"""What a visitor sees when a callback fails: one plain line, escaped once, no server path.

Gradio shows an error's message as HTML, so the text is escaped here (and nowhere else): a name or
question the user typed comes back as text, never as a link, form or image. An unexpected error
shows its type only; its message may name server paths and goes to the log instead.
"""

from __future__ import annotations

import html
import logging

import gradio as gr

from rrdemo.errors import RRError

log = logging.getLogger(__name__)

OUT_OF_MEMORY = "out of memory: lower N, M or L, or pick a smaller model, and try again"


def plain(text: str) -> str:
    """`text` as inert HTML that shows the same characters."""
    return html.escape(text, quote=False)


def user_error(exc: BaseException, what: str = "run") -> gr.Error:
    """The `gr.Error` to raise for `exc`: an RRError's own message (written to be shown), a
    memory error's advice, or for anything else the type and a pointer to the server log."""
    if isinstance(exc, RRError):
        text = str(exc)
    elif isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        text = OUT_OF_MEMORY
    else:
        log.error("the %s failed", what, exc_info=exc)
        text = f"the {what} failed ({type(exc).__name__}); the server log has the details"
    return gr.Error(plain(text), print_exception=False)
