"""The one user-facing error: shown as is, and a ValueError so that callers checking values catch it."""

from __future__ import annotations

import pytest

from rrdemo.cli import main
from rrdemo.errors import RRError


def test_the_message_is_kept_exactly_and_value_error_handlers_catch_it():
    message = "K must be a whole number of at least 1, got 0"
    with pytest.raises(ValueError) as caught:
        raise RRError(message)
    assert type(caught.value) is RRError and str(caught.value) == message


def test_a_command_shows_it_as_one_line_and_exits_2(capsys):
    assert main(["theory", "--gamma-h", "1.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("rrdemo theory: error: ") and "gamma_H" in err[0]
