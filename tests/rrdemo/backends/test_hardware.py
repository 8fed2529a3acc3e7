"""ZeroGPU duration and the `spaces.GPU` wrapping, with a fake `spaces`."""

from __future__ import annotations

import importlib.machinery
import sys
import types

import pytest

from rrdemo.backends import hardware
from ui.state import ArenaRequest


def test_gpu_duration_grows_with_the_work_and_is_bounded() -> None:
    small = hardware.gpu_duration(n=3, m=3, max_tokens=24, k=8)
    default = hardware.gpu_duration(n=5, m=0, max_tokens=256, k=100)
    assert small == hardware.GPU_MIN_S  # tiny runs ask for the minimum
    assert hardware.gpu_duration(5, 5, 256, 100) == default  # m = 0 means M = N
    assert hardware.gpu_duration(5, 5, 1024, 100) > default  # longer answers: more steps
    assert hardware.gpu_duration(5, 5, 1024, 8) > hardware.gpu_duration(5, 5, 1024, 100)  # turns
    assert hardware.gpu_duration(9, 20, 1024, 8) > hardware.gpu_duration(9, 5, 1024, 8)  # more M
    assert hardware.gpu_duration(9, 50, 8192, 1) == hardware.GPU_MAX_S


def _fake_spaces(monkeypatch: pytest.MonkeyPatch) -> list:
    calls: list = []
    module = types.ModuleType("spaces")
    module.__spec__ = importlib.machinery.ModuleSpec("spaces", None)

    def gpu(duration):
        def wrap(function):
            def wrapped(*args, **kwargs):
                calls.append(duration(*args, **kwargs))  # what ZeroGPU does before scheduling
                return function(*args, **kwargs)

            return wrapped

        return wrap

    module.GPU = gpu
    monkeypatch.setitem(sys.modules, "spaces", module)
    return calls


def test_no_zero_gpu_means_no_spaces_import(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPACES_ZERO_GPU", raising=False)
    monkeypatch.setitem(sys.modules, "spaces", None)  # importing it would fail

    def function(x: int) -> int:
        return x + 1

    assert not hardware.on_zero_gpu()
    assert hardware.on_gpu(function, lambda x: 60) is function
    hardware.prepare()  # no import attempted


def test_zero_gpu_wraps_the_arena_run_with_its_duration(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.support.fakes import FakeBackend, FakePool, obeys_injection
    from ui import arena
    from ui.state import ARENA_FIELDS

    calls = _fake_spaces(monkeypatch)
    monkeypatch.setenv("SPACES_ZERO_GPU", "true")
    assert hardware.on_zero_gpu()
    request = ArenaRequest(model="smollm2", n=3, c=1, k=4, m=2, max_tokens=600, task="logic3")
    run = arena._run_callback(FakePool(FakeBackend("smollm2", obeys_injection)))

    frames = list(run(None, *[getattr(request, name) for name in ARENA_FIELDS]))
    assert frames  # the run streamed through the wrapped function
    assert calls == [hardware.gpu_duration(3, 2, 600, 4)]
    assert calls[0] > hardware.GPU_MIN_S
