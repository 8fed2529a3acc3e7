"""Where a run stands, per condition: questions done of planned, what failed and why, what it cost.

Read from the run log alone (`rrdemo.runs.log.read_log`), so it works on a log another process is
still appending to. What counts as a failure is what the log can show:
  * a unit that stopped before its end: trajectory records with no "done" record after them (the
    run was killed or raised there; a resume redoes the unit);
  * a trajectory without a readable answer, by its reason: cut off at L, or ended without a
    final-answer statement;
  * a vote in which every trajectory abstained, so the method decided nothing.
Tokens and time are the finished units' compute records (MAJ and RRMaj together).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rrdemo.config import ct_label
from rrdemo.runs.log import RunLog, read_log
from rrdemo.runs.write import merge_logs

CUT_AT_L = "cut off at L"
NO_STATEMENT = "no final-answer statement"


@dataclass
class ConditionStatus:
    """One condition's progress, failures and cost."""

    key: str
    task: str
    ensemble: str
    label: str  # the paper's `3c2t`
    strength: str
    k: int
    m: int
    max_tokens: int
    planned: int  # questions the sweep planned for this condition
    done: int = 0  # questions with a "done" record
    stopped: list[str] = field(default_factory=list)  # questions whose unit stopped midway
    unanswered: Counter = field(default_factory=Counter)  # (method, reason) -> trajectories
    trajectories: Counter = field(default_factory=Counter)  # method -> finished trajectories
    undecided: Counter = field(default_factory=Counter)  # method -> votes where all abstained
    decode_tokens: int = 0
    prefill_tokens: int = 0
    wall_s: float = 0.0

    @property
    def left(self) -> int:
        """Questions still to run."""
        return self.planned - self.done

    @property
    def name(self) -> str:
        """The condition as people read it: task, ensemble, `3c2t`, strength, K, M, L."""
        return (
            f"{self.task} {self.ensemble} {self.label} {self.strength} "
            f"K={self.k} M={self.m} L={self.max_tokens}"
        )

    def failures(self) -> list[str]:
        """One line per kind of failure, with its count and reason."""
        lines = []
        if self.stopped:
            shown = ", ".join(self.stopped[:3]) + (", ..." if len(self.stopped) > 3 else "")
            lines.append(
                f"{len(self.stopped)} question(s) stopped before their end ({shown}): the run was "
                "killed or failed there; resuming the run redoes them"
            )
        for (method, reason), count in sorted(self.unanswered.items()):
            total = self.trajectories[method]
            why = f"cut off at L = {self.max_tokens}" if reason == CUT_AT_L else reason
            lines.append(f"{count} of {total} {method} trajectories without an answer: {why}")
        for method, count in sorted(self.undecided.items()):
            lines.append(f"{count} {method} vote(s) decided nothing: every trajectory abstained")
        return lines

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON types, with the derived numbers and the failure lines."""
        data = asdict(self)
        data["unanswered"] = [
            {"method": method, "reason": reason, "count": count}
            for (method, reason), count in sorted(self.unanswered.items())
        ]
        data["trajectories"] = dict(self.trajectories)
        data["undecided"] = dict(self.undecided)
        return {**data, "left": self.left, "failures": self.failures()}


def _condition_status(cond: dict[str, Any]) -> ConditionStatus:
    return ConditionStatus(
        key=cond["key"],
        task=cond["task"],
        ensemble=cond["ensemble"],
        label=cond.get("label") or ct_label(int(cond["c"]), int(cond["n"]) - int(cond["c"])),
        strength=cond["strength"],
        k=int(cond["k"]),
        m=int(cond["m_star"]),
        max_tokens=int(cond["max_tokens"]),
        planned=len(cond.get("questions") or []),
    )


def log_status(log: RunLog) -> list[ConditionStatus]:
    """Every condition of the log's header, in header order, with what its records show."""
    statuses = {key: _condition_status(cond) for key, cond in log.conditions.items()}
    for done, trajectories in log.units():
        if done is None:  # the run stopped inside this unit
            first = trajectories[0]
            if first.get("condition") in statuses:
                statuses[first["condition"]].stopped.append(str(first.get("question_id")))
            continue
        status = statuses[done["condition"]]
        status.done += 1
        for trajectory in trajectories:
            method = trajectory.get("method", "?")
            status.trajectories[method] += 1
            if trajectory.get("vote_key") is None:
                cut = trajectory.get("finish_reason") == "length"
                status.unanswered[(method, CUT_AT_L if cut else NO_STATEMENT)] += 1
        for method, vote in (done.get("votes") or {}).items():
            if isinstance(vote, dict) and vote.get("answer") is None:
                status.undecided[method] += 1
        for compute in (done.get("compute") or {}).values():
            if isinstance(compute, dict):
                status.decode_tokens += int(compute.get("decode_tokens") or 0)
                status.prefill_tokens += int(compute.get("prefill_tokens") or 0)
                status.wall_s += float(compute.get("wall_s") or 0.0)
    return list(statuses.values())


def shards_status(paths: Sequence[Path | str]) -> list[ConditionStatus]:
    """`log_status` of one log, or of the logs of one sweep run in shards read as one run: their
    finished units joined as `merge_logs` joins them (logs of different sweeps are refused the
    same way), plus the units each shard stopped in. Nothing is written beside the logs."""
    if len(paths) == 1:
        return log_status(read_log(paths[0]))
    with tempfile.TemporaryDirectory(prefix="rrdemo-status-") as tmp:
        joined = Path(tmp) / "joined.jsonl"
        merge_logs(paths, joined)
        log = read_log(joined)
    statuses = log_status(log)
    by_key = {status.key: status for status in statuses}
    for path in paths:  # a unit one shard stopped in, unless another log finished it
        for status in log_status(read_log(path)):
            stopped = by_key[status.key].stopped
            stopped += [q for q in status.stopped if (status.key, q) not in log.done]
    return statuses


def render(statuses: list[ConditionStatus]) -> str:
    """A text table (one line per condition), a total line, then the failures per condition."""
    head = ("condition", "done", "planned", "left", "decode tok", "prefill tok", "time")
    rows = [
        (
            s.name,
            str(s.done),
            str(s.planned),
            str(s.left),
            f"{s.decode_tokens:,}",
            f"{s.prefill_tokens:,}",
            _duration(s.wall_s),
        )
        for s in statuses
    ]
    done, planned = sum(s.done for s in statuses), sum(s.planned for s in statuses)
    rows.append(
        (
            f"all {len(statuses)} conditions",
            str(done),
            str(planned),
            str(planned - done),
            f"{sum(s.decode_tokens for s in statuses):,}",
            f"{sum(s.prefill_tokens for s in statuses):,}",
            _duration(sum(s.wall_s for s in statuses)),
        )
    )
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in (head, *rows)
    ]
    failing = [(s, s.failures()) for s in statuses if s.failures()]
    lines.append("")
    if not failing:
        lines.append("No failures: every finished trajectory has an answer, every vote decided.")
    for status, failures in failing:
        lines.append(f"{status.name}:")
        lines += [f"  {line}" for line in failures]
    return "\n".join(lines)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
