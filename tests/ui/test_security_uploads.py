"""An uploaded run log is listed in one pass, at most 2,000 questions, and the same file asked
again is answered from memory: the probe's 2.07 MB log of 24,053 minimal records cost 320 s of
CPU per `/upload_log` call."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrdemo.errors import RRError
from tests.rrdemo.test_replay import crafted_log
from ui.replay import MAX_LISTED, _listed, upload_choices


def test_the_probes_log_is_refused_after_one_pass(tmp_path: Path) -> None:
    log = crafted_log(tmp_path / "crafted.jsonl", 24_053)
    assert log.stat().st_size > 1.9e6  # the probe's upload: about 2 MB
    with pytest.raises(
        RRError, match=r"crafted\.jsonl has 24,053 finished questions; .* 2,000"
    ) as refused:
        upload_choices(str(log))
    assert str(tmp_path) not in str(refused.value)  # the message names the file, not its path


def test_a_log_is_listed_once_per_file(tmp_path: Path) -> None:
    log = crafted_log(tmp_path / "mine.jsonl", MAX_LISTED)
    _listed.cache_clear()
    choices = upload_choices(str(log))
    assert len(choices) == MAX_LISTED and choices[0][1].endswith("|q0")
    assert upload_choices(str(log)) == choices
    assert _listed.cache_info().hits == 1  # the second call read nothing
