"""What a visitor sees when a callback fails: one line, escaped once, no server detail."""

from __future__ import annotations

import logging

import gradio as gr

from rrdemo.errors import RRError
from ui.errors import OUT_OF_MEMORY, TOO_DEEP, plain, user_error


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


def test_a_too_deep_input_is_named_without_its_error_class():
    error = user_error(RecursionError("maximum recursion depth exceeded"), "replay")
    assert error.message == plain(TOO_DEEP) and "Recursion" not in error.message


def test_anything_else_shows_neither_type_nor_message_and_goes_to_the_log(caplog):
    secret = "/home/server/.cache/private/model.bin"
    with caplog.at_level(logging.ERROR, logger="ui.errors"):
        error = user_error(FileNotFoundError(secret), "sweep")
    assert error.message == "the sweep failed on the server; the server log has the details"
    assert secret not in error.message and "FileNotFound" not in error.message
    assert any(record.exc_info and secret in str(record.exc_info[1]) for record in caplog.records)
