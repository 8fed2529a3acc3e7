"""How often an honest agent writes in RR trajectories, per setting (the numbers behind the
interactive defaults in `rrdemo.defaults.INTERACTIVE_DEFAULTS` and docs/app.md, "Defaults").

    python -m tools.speaker_share logic3 20 '{"k": 8}' '{"k": 4}' '{"k": 8, "eos_policy": "pass"}'

Each setting is JSON: RunConfig fields over the interactive defaults, plus "model" (default
smollm2). Runs RRMaj only, 3c2t strong, on the first questions of the task's seeded sample.
"""

from __future__ import annotations

import json
import sys
import time

from rrdemo.backends.choice import with_backends
from rrdemo.backends.pool import ModelPool
from rrdemo.defaults import INTERACTIVE_DEFAULTS
from rrdemo.events import Decision
from rrdemo.fold import fold
from rrdemo.protocols import run_question
from rrdemo.seats import homogeneous_agents
from rrdemo.tasks import get_task, load_questions


def measure(task_name: str, n_questions: int, setting: dict, pool: ModelPool) -> str:
    setting = dict(setting)
    model = setting.pop("model", "smollm2")
    d = INTERACTIVE_DEFAULTS
    config = with_backends(d.run_config(homogeneous_agents([model], 5, 3), **setting), "auto")
    task = get_task(task_name)
    start = time.monotonic()
    honest = mixed = total = right = 0
    for question in load_questions(task, n=n_questions, seed=config.sampling.seed):
        events = list(run_question(config, question, task, pool, methods=("RRMaj",)))
        speakers = fold(events).speakers
        total += len(speakers.trajectories)
        honest += speakers.with_honest
        mixed += speakers.mixed
        right += sum(bool(e.correct) for e in events if isinstance(e, Decision))
    return (
        f"{task_name} {model} K={config.k} L={config.max_tokens} eos={config.eos_policy} "
        f"style={config.prompt_style}: honest writer in {honest}/{total}, mixed {mixed}/{total}, "
        f"RRMaj right {right}/{n_questions} ({time.monotonic() - start:.0f} s)"
    )


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__)
        return 2
    pool = ModelPool()
    for raw in argv[2:]:
        print(measure(argv[0], int(argv[1]), json.loads(raw), pool), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
