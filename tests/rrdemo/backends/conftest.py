"""The llama.cpp model pool the backend tests share (one load per module)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def llama_pool():
    from rrdemo.backends.pool import ModelPool

    return ModelPool()
