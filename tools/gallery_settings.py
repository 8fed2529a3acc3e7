"""Write the gallery's settings for one sweep log by the gallery's rule (rrdemo.gallery).

For each (task, corruption setting) listed below that the log has, the setting shows the first
3 finished questions of its condition in log order, whatever the outcome. The settings of this
log are put first in assets/gallery.json (the Arena opens on the first), replacing any earlier
ones of the same log; the other logs' settings stay after them.

    .venv/bin/python -m tools.gallery_settings qwen15b/log.jsonl 2026-11-23
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rrdemo.gallery import DEFAULT_MANIFEST, cached_log, first_questions

# (task, config, setting name, what it shows), in the order the gallery lists them.
SETTINGS = (
    ("logic3", "3c2t", "Trap and rescue · strong 3c2t · Logic3",
     "The consensus trap: 3 of 5 agents are told to pick a wrong option (rho = 0.6). MAJ follows "
     "the corrupted majority when they obey; RR lets the honest agents' turns pull the shared "
     "text back, or not."),
    ("logic3", "1c4t", "Robustness tax · strong 1c4t · Logic3",
     "A single corrupted agent (rho = 0.2): MAJ outvotes it, while in RR it writes part of every "
     "shared text."),
    ("logic3", "0c5t", "Ceiling · 0c5t · Logic3",
     "No corruption: how well the ensemble does on its own (the clean ceiling)."),
    ("logic3", "5c0t", "Floor · strong 5c0t · Logic3",
     "Every agent is corrupted (rho = 1): no honest voice is left, in either protocol."),
    ("logic3", "4c1t", "Heavy majority · strong 4c1t · Logic3",
     "Four of five agents corrupted (rho = 0.8): one honest writer in every shared text."),
    ("gsm8k", "3c2t", "Trap on arithmetic · strong 3c2t · GSM8K",
     "The 3c2t trap on grade-school arithmetic, where a wrong number is easy to argue for."),
    ("aqua", "3c2t", "Trap on algebra · strong 3c2t · AQuA",
     "The 3c2t trap on multiple-choice algebra word problems."),
)  # fmt: skip


def main(log_name: str, recorded: str, manifest: Path = DEFAULT_MANIFEST) -> None:
    data = json.loads(manifest.read_text(encoding="utf-8"))
    log = cached_log(manifest.parent / log_name)
    model = next(iter({c["ensemble"] for c in log.header["conditions"]}))
    keys = {(c["task"], c["label"]): c["key"] for c in log.header["conditions"]}
    ours = []
    for task, label, name, description in SETTINGS:
        key = keys.get((task, label))
        questions = first_questions(log, key, 3) if key else []
        if questions:
            ours.append(
                {
                    "name": f"{name} · {model}",
                    "description": description,
                    "log": log_name,
                    "condition": key,
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
