"""What a visitor sees when a callback fails: one line, escaped once, no server detail."""

from __future__ import annotations

import logging

import gradio as gr

from rrdemo.errors import RRError
from ui.errors import OUT_OF_MEMORY, plain, user_error


def test_plain_text_shows_the_same_characters_and_no_markup():
    hostile = "<img src=x onerror=alert(1)> & <a href='//evil'>x</a>"
    shown = plain(hostile)
    assert "<" not in shown and ">" not in shown
    assert shown.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == hostile


def test_the_users_mistake_is_shown_as_written_escaped():
    error = user_error(RRError("unknown model '<b>x</b>'; use a hub id"))
    assert isinstance(error, gr.Error)
    assert error.message == "unknown model '&lt;b&gt;x&lt;/b&gt;'; use a hub id"


class OutOfMemoryError(RuntimeError):
    """Named like torch.cuda.OutOfMemoryError, which the app must not import to recognise."""


def test_running_out_of_memory_gets_advice():
    assert user_error(MemoryError()).message == plain(OUT_OF_MEMORY)
    assert user_error(OutOfMemoryError("CUDA out of memory")).message == plain(OUT_OF_MEMORY)


def test_anything_else_shows_its_type_only_and_goes_to_the_log(caplog):
    secret = "/home/server/.cache/private/model.bin"
    with caplog.at_level(logging.ERROR, logger="ui.errors"):
        error = user_error(FileNotFoundError(secret), "sweep")
    assert error.message == "the sweep failed (FileNotFoundError); the server log has the details"
    assert secret not in error.message
    assert any(record.exc_info and secret in str(record.exc_info[1]) for record in caplog.records)
