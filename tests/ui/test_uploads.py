"""The per-client upload budget (count and bytes per window) and the deletion of a used upload.
On a live app: test_security.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from rrdemo.errors import RRError
from ui.uploads import UploadBudget, discard


def test_each_client_has_a_count_and_a_byte_budget_per_window(monkeypatch) -> None:
    monkeypatch.setenv("RRDEMO_UPLOADS", "3")
    monkeypatch.setenv("RRDEMO_UPLOAD_MB", "2")
    monkeypatch.setenv("RRDEMO_UPLOAD_WINDOW_S", "600")
    now = [0.0]
    budget = UploadBudget(app=None, clock=lambda: now[0])
    assert budget.refusal("ip:1", 2**20) is None
    assert "at most 2 MiB per 10 minutes" in budget.refusal("ip:1", 2**20 + 1)
    assert budget.refusal("ip:1", 10) is None and budget.refusal("ip:1", 10) is None
    assert "Too many uploads: at most 3 per 10 minutes" in budget.refusal("ip:1", 10)
    assert budget.refusal("ip:2", 2**20) is None  # another client has its own budget
    assert "must say its length" in budget.refusal("ip:3", None)
    now[0] = 600.0  # the window has passed: budget back, and nothing old is remembered
    assert budget.refusal("ip:1", 2**20) is None and set(budget.spent) == {"ip:1"}
    monkeypatch.setenv("RRDEMO_UPLOADS", "0")
    with pytest.raises(RRError, match="RRDEMO_UPLOADS must be a whole number of at least 1"):
        UploadBudget(app=None)


def test_a_used_upload_is_deleted(tmp_path: Path) -> None:
    path = tmp_path / "upload.json"
    path.write_text("{}")
    discard(str(path))
    discard(str(path))  # already gone: nothing to do
    discard(None)
    assert not path.exists()
