"""Choices shared by the Arena and the Experiments tab, as (label, value) pairs for gradio.

The values are the engine's own names (`rrdemo.tasks.TASK_NAMES`, `DEMO_TASK`); only the labels are
ours. The demo task is labelled as ours so that nobody takes it for one of the paper's benchmarks.
"""

from __future__ import annotations

from rrdemo.tasks import DEMO_TASK, TASK_NAMES

DEMO_LABEL = f"{DEMO_TASK} (ours, not the paper's: 40 easy questions)"

# The tasks a sweep can run: the paper's six benchmarks, then our demo task.
SWEEP_TASK_CHOICES: tuple[tuple[str, str], ...] = (
    *((name, name) for name in TASK_NAMES),
    (DEMO_LABEL, DEMO_TASK),
)
