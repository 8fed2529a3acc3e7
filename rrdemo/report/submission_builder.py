"""A leaderboard submission built from an experiment log: the contract's one builder.

`build_submission` reads a run's log with the report's reader, makes one result row per
condition (each question's MAJ and RRMaj decision as the run cast it, with Wilson 95% intervals)
and validates the whole with the contract (`rrdemo.report.submission`) before returning it, so
what it returns is what the board accepts. `rrdemo export RUN.jsonl` writes it to a file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import rrdemo
from rrdemo.config import STYLE_AND_POLICY, logged_setting
from rrdemo.report.models import UnnamedWeights, result_model
from rrdemo.report.stats import wilson95
from rrdemo.report.submission import (
    SCHEMA_VERSION,
    Submission,
    SubmissionRejected,
    validate_submission,
)
from rrdemo.runs.log import RunLog, read_log


def build_submission(
    log_path: Path | str | RunLog,
    submitter: str,
    notes: str = "",
    source: str = "local_run",
    created: datetime | None = None,
    *,
    provenance: str | None = None,
    superseded: str | None = None,
) -> Submission:
    """The submission of an experiment log (rows name their adversary strategy, prompt style and
    end-of-sequence policy), dated `created` (UTC), else when the log was last written.

    One result row per condition: MAJ and RRMaj accuracy as the run decided each question at
    M = M* (estimator "decisions", the numbers of the report's paired table and the Arena's
    result line), with Wilson 95% intervals over its finished questions. Agents are named by
    their weights (`rrdemo.report.models.result_model`: a served agent by its hub_id).
    `provenance` names what made the rows (default: the log's file name); `superseded`, when
    given, marks every row with that reason. Raises `SubmissionRejected` when the run cannot be
    one (a task that is not a benchmark, a served agent that does not name its weights,
    conditions of one row that differ in prompt style or end-of-sequence policy).
    """
    from rrdemo.report.paired import paired_by_condition

    log = log_path if isinstance(log_path, RunLog) else read_log(log_path)  # or a joined run's
    log_path = log.path
    _refuse_adaptive_turns(log.conditions.values())
    seen: dict[tuple[Any, ...], dict[str, Any]] = {}
    for c in log.conditions.values():
        key = (c["ensemble"], c["task"], c["strength"], c["k"], c["max_tokens"], c["n"], c["c"])
        first = seen.setdefault(key + (c["adversary"],), c)
        if _run_settings(first) != _run_settings(c):
            raise SubmissionRejected(
                [
                    f"{c['ensemble']} ({c['task']}, {c['strength']}, K = {c['k']}, c = {c['c']}) "
                    "ran under several prompt styles or end-of-sequence policies; a row names one "
                    "of each, so this log cannot be one submission"
                ]
            )
    decided = paired_by_condition(log)
    order = sorted(
        decided,
        key=lambda key: tuple(
            log.conditions[key][name]
            for name in ("ensemble", "task", "strength", "k", "max_tokens", "n", "adversary", "c")
        ),
    )
    results = [_result_row(log.conditions[key], decided[key], superseded) for key in order]
    # Else when the run's log was last written: exporting one finished run twice gives one file.
    # A checkout does not keep a file's time, so the project's own runs pass the day they finished.
    if created is None:
        created = datetime.fromtimestamp(Path(log_path).stat().st_mtime, timezone.utc)
    elif created.tzinfo is None:
        created = created.replace(tzinfo=timezone.utc)
    data = {
        "schema_version": SCHEMA_VERSION,
        "submitter": submitter,
        "notes": notes,
        "source": source,
        "provenance": provenance or Path(log_path).name,
        "rrdemo_version": rrdemo.__version__,
        "created": created.isoformat(timespec="seconds"),
        "results": results,
    }
    return validate_submission(json.loads(json.dumps(data)), allow_reserved=True)


def _result_row(cond: dict[str, Any], row: Any, superseded: str | None) -> dict[str, Any]:
    """One result row of a logged condition and its paired decisions (`row`)."""
    agents = cond["config"]["agents"]
    try:
        models = [result_model(a) for a in agents]
    except UnnamedWeights as exc:
        raise SubmissionRejected([f"{cond['ensemble']} ({cond['task']}): {exc}"]) from None
    n = row.questions
    maj, rrmaj = round(row.maj * n), round(row.rrmaj * n)
    return {
        "model": models[0],
        "model_revision": agents[0].get("revision"),
        "agent_models": models,
        "corrupted_agents": [i for i, a in enumerate(agents) if a["corrupted"]],
        "dataset": cond["task"],
        "strength": cond["strength"],
        "n_agents": cond["n"],
        "n_corrupted": cond["c"],
        "n_honest": cond["n"] - cond["c"],
        "k": cond["k"],
        "m": cond["m_star"],
        "max_tokens": cond["max_tokens"],
        "n_questions": n,
        "maj_accuracy": _frac(maj / n),
        "rrmaj_accuracy": _frac(rrmaj / n),
        "maj_ci": [_frac(x) for x in wilson95(maj, n)],
        "rrmaj_ci": [_frac(x) for x in wilson95(rrmaj, n)],
        "config_hash": cond["config_hash"],
        "adversary": cond["adversary"],
        **_run_settings(cond),
        "estimator": "decisions",
        "superseded": superseded,
        "maj_only": row.maj_only,
        "rrmaj_only": row.rrmaj_only,
    }


def _refuse_adaptive_turns(conditions: Iterable[dict[str, Any]]) -> None:
    """A board row is the paper's protocol, K tokens a turn: a log with another turn policy
    (`rrdemo.turns`, beyond the paper) is refused, naming it, rather than half-exported."""
    found = sorted({c.get("turn_policy") or "fixed" for c in conditions} - {"fixed"})
    if found:
        raise SubmissionRejected(
            [
                f"this log ran the turn policy {', '.join(found)}; a board row is the paper's "
                "fixed turns of K tokens, so only a log of fixed turns can be submitted (its "
                "report compares the policies: rrdemo report LOG)"
            ]
        )


def _run_settings(condition: dict[str, Any]) -> dict[str, str]:
    """The prompt style and end-of-sequence policy a logged condition ran with: its config's, or
    the setting's default (`rrdemo.config.BEYOND_PAPER`) when the config does not name it."""
    return {name: logged_setting(condition["config"], name) for name in STYLE_AND_POLICY}


def _frac(x: float) -> float:
    return float(min(1.0, max(0.0, round(x, 6))))
