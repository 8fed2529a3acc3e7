"""The calibration log's header read alone, as the full reader checks it."""

from __future__ import annotations

import json

import pytest

from rrdemo.calibration.log import (
    CALIBRATION_FORMAT,
    CALIBRATION_VERSION,
    read_calibration,
    read_calibration_header,
)
from rrdemo.errors import RRError

HEADER = {"format": CALIBRATION_FORMAT, "version": CALIBRATION_VERSION, "settings": {}}


def test_the_header_is_read_without_the_answers(tmp_path) -> None:
    log = tmp_path / "c.jsonl"
    log.write_text(json.dumps(HEADER) + "\n" + "not an answer\n")
    assert read_calibration_header(log) == HEADER
    with pytest.raises(RRError, match="line 2: not a JSON record"):
        read_calibration(log)  # the answers are the full reader's to check


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (json.dumps({"format": "rrdemo-run"}) + "\n", "is not a calibration log"),
        (json.dumps(HEADER), "is not a calibration log"),  # a header cut before its newline
        ("", "is not a calibration log"),
        (json.dumps({**HEADER, "version": 0}) + "\n", "of version 0; this rrdemo reads version"),
    ],
)
def test_a_file_that_is_not_a_calibration_log_is_refused_as_the_reader_refuses_it(
    tmp_path, text: str, message: str
) -> None:
    log = tmp_path / "c.jsonl"
    log.write_text(text)
    for read in (read_calibration_header, read_calibration):
        with pytest.raises(RRError, match=message):
            read(log)
    with pytest.raises(RRError, match="cannot read the calibration log"):
        read_calibration_header(tmp_path / "missing.jsonl")
