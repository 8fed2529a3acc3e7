"""Choices shared by the Arena and the Experiments tab, as (label, value) pairs for gradio.

The values are the engine's own names (`rrdemo.tasks.TASK_NAMES`, `DEMO_TASK`, the generated
`arithS`); only the labels are ours. The demo and generated tasks are labelled as ours so that
nobody takes them for one of the paper's benchmarks.
"""

from __future__ import annotations

from rrdemo.tasks import DEMO_TASK, TASK_NAMES
from rrdemo.tasks.generated import GENERATED_PREFIX, MAX_STEPS

DEMO_LABEL = f"{DEMO_TASK} (ours, not the paper's: 40 easy questions)"

# The tasks a sweep can run: the paper's six benchmarks, our demo task, then the generated
# arithmetic (beyond the paper; the evidence run's task is one of them).
SWEEP_TASK_CHOICES: tuple[tuple[str, str], ...] = (
    *((name, name) for name in TASK_NAMES),
    (DEMO_LABEL, DEMO_TASK),
    *(
        (
            f"{GENERATED_PREFIX}{s} (generated, beyond the paper: {s} steps)",
            f"{GENERATED_PREFIX}{s}",
        )
        for s in range(1, MAX_STEPS + 1)
    ),
)
