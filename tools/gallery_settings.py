"""Write the gallery's settings for one sweep log by the gallery's rule (rrdemo.gallery).

For each (task, corruption setting) listed below that the log has, the setting shows the first
3 finished questions of its condition in the order the sweep runs them, whatever the outcome. The settings of this
log are put first in assets/gallery.json (the Arena opens on the first), replacing any earlier
ones of the same log; the other logs' settings stay after them.

    .venv/bin/python -m tools.gallery_settings evidence/log.jsonl 2026-11-25
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rrdemo.gallery import DEFAULT_MANIFEST, cached_log, first_questions

# (config, what it shows), in the order the gallery lists them; each setting is named by its
# condition ("moderate 3c2t"), and the Arena adds its model, task and measured outcome.
SETTINGS = (
    ("3c2t",
     "3 of 5 agents are told to pick a wrong answer (rho = 0.6): MAJ follows the corrupted "
     "majority when they obey; in RR the honest agents' turns may pull the shared text back."),
    ("1c4t",
     "A single corrupted agent (rho = 0.2): MAJ outvotes it, while in RR it writes part of every "
     "shared text."),
    ("0c5t", "No corruption: how well the ensemble does on its own (the clean ceiling)."),
    ("5c0t",
     "Every agent is corrupted (rho = 1): no honest voice is left, in either protocol."),
    ("4c1t",
     "Four of five agents corrupted (rho = 0.8): one honest writer in every shared text."),
)  # fmt: skip


def main(log_name: str, recorded: str, manifest: Path = DEFAULT_MANIFEST) -> None:
    data = json.loads(manifest.read_text(encoding="utf-8"))
    log = cached_log(manifest.parent / log_name)
    conditions = {(c["task"], c["label"]): c for c in log.header["conditions"]}
    tasks = list(dict.fromkeys(c["task"] for c in log.header["conditions"]))
    ours = []
    for task in tasks:
        for label, description in SETTINGS:
            condition = conditions.get((task, label))
            questions = first_questions(log, condition["key"], 3) if condition else []
            if questions:
                strength = "" if condition["c"] == 0 else f"{condition['strength']} "
                ours.append(
                    {
                        "name": f"{strength}{label}",
                        "description": description,
                        "log": log_name,
                        "condition": condition["key"],
                        "questions": questions,
                    }
                )
    others = [s for s in data["settings"] if s["log"] != log_name]
    data["settings"] = ours + others
    data["logs"] = {
        log_name: {"recorded": recorded},
        **{k: v for k, v in data["logs"].items() if k != log_name},
    }
    manifest.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(ours)} settings of {log_name} first in {manifest}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
