"""The llama.cpp backend tests share the run's model pool (`real_pool`: each model loads once
per test run)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def llama_pool(real_pool):
    return real_pool
