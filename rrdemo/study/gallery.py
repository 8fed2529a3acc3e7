"""A log's settings in the gallery manifest (rrdemo.gallery), picked by the gallery's rule.

For each (task, corruption setting) below that the log has, the setting shows the first 3
finished questions of its condition in the order the sweep runs them, whatever the outcome. A log
the manifest already lists keeps its place (rebuilding a study rewrites the same file); a new
log's settings go after the current runs' (before the recordings kept aside), so the setting the
Arena opens on, the manifest's first, changes only by an edit of the manifest (docs/app.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rrdemo.config import BEYOND_PAPER, STYLE_AND_POLICY, logged_setting
from rrdemo.gallery import cached_log, first_questions

QUESTIONS = 3  # recorded questions per setting
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


def log_settings(
    log_path: Path, log_name: str, paired_with: str | None = None
) -> list[dict[str, Any]]:
    """The gallery settings of one log (named in the manifest as `log_name`), by the rule;
    `paired_with` names the log of the run it varies (its MAJ is that run's)."""
    log = cached_log(log_path)
    conditions = {(c["task"], c["label"]): c for c in log.header["conditions"]}
    tasks = list(dict.fromkeys(c["task"] for c in log.header["conditions"]))
    found = []
    for task in tasks:
        for label, description in SETTINGS:
            condition = conditions.get((task, label))
            questions = first_questions(log, condition["key"], QUESTIONS) if condition else []
            if questions:
                strength = "" if condition["c"] == 0 else f"{condition['strength']} "
                said = description + _reading_said(condition["config"])
                setting = {
                    "name": f"{_reading(condition['config'])}{strength}{label}",
                    "description": said + (PAIRED_SAID if paired_with else ""),
                    "log": log_name,
                    "condition": condition["key"],
                    "questions": questions,
                }
                found.append(setting | ({"paired_with": paired_with} if paired_with else {}))
    return found


def _reading(config: dict[str, Any]) -> str:
    """The prompt style and end-of-sequence policy when they are not the defaults ("direct",
    "end"), as a name prefix: "step-by-step · ", "pass · "; empty otherwise."""
    values = {name: logged_setting(config, name) for name in STYLE_AND_POLICY}
    return "".join(f"{v} · " for name, v in values.items() if v != str(BEYOND_PAPER[name]))


READINGS = {  # what a setting's description adds for a style or policy that is not the default
    "step-by-step": " Every agent is asked for numbered steps, each number computed, before its "
    "answer (prompt style step-by-step).",
    "pass": " An end-of-sequence closes only its writer's turn (policy pass).",
}


PAIRED_SAID = (
    " This run ran RRMaj alone; its MAJ is the run it varies, on the same question (MAJ does not "
    "read the policy)."
)


def _reading_said(config: dict[str, Any]) -> str:
    return "".join(READINGS.get(config.get(name) or "", "") for name in STYLE_AND_POLICY)


def write_gallery_settings(
    manifest: Path, log_path: Path, recorded: str, paired_with: Path | None = None
) -> int:
    """Put the log's settings into the manifest (in place, or after the current runs' when
    new); the count. `paired_with`: the log of the run this one varies."""
    data = json.loads(manifest.read_text(encoding="utf-8"))
    folder = manifest.parent.resolve()
    log_name = Path(log_path).resolve().relative_to(folder).as_posix()
    base = (
        Path(os.path.relpath(Path(paired_with).resolve(), folder)).as_posix()
        if paired_with
        else None
    )
    ours = log_settings(log_path, log_name, base)
    settings, placed = [], False
    for setting in data["settings"]:
        if setting["log"] != log_name:
            settings.append(setting)
        elif not placed:
            settings += ours
            placed = True
    if not placed:  # after the last current setting: the opening one stays first
        current = [i for i, s in enumerate(settings) if not s.get("shelf")]
        at = current[-1] + 1 if current else 0
        settings[at:at] = ours
    data["settings"] = settings
    logs, entry = data["logs"], {"recorded": recorded}
    if log_name in logs:
        data["logs"] = {k: entry if k == log_name else v for k, v in logs.items()}
    else:  # after the logs of the current runs, likewise
        names = list(logs)
        shelved = {s["log"] for s in settings if s.get("shelf")} - {log_name}
        at = next((i for i, n in enumerate(names) if n in shelved), len(names))
        names.insert(at, log_name)
        data["logs"] = {n: entry if n == log_name else logs[n] for n in names}
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if manifest.read_text(encoding="utf-8") != text:
        manifest.write_text(text, encoding="utf-8")
    return len(ours)
