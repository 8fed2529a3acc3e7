"""Several evidence runs' logs at one config, pooled: their decisions read, the pool's table and its
forest plot beside the paper's numbers, written into one folder (`rrdemo report LOG... --pool`,
and a study of kind `pool`).

A log that decoded RRMaj alone (a run that varies another one's end-of-sequence policy) takes
MAJ's decisions from the other given log that ran the same condition, as its own report does
(`rrdemo.report.policies`). The numbers come from `rrdemo.report.pooled`; each run's own interval
uses the seed of its own report, so a run's row here is its report's row.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rrdemo.config import logged_setting
from rrdemo.errors import RRError
from rrdemo.report.paired import condition_seed, detectable_text
from rrdemo.report.policies import decisions_by_condition, match_key, pair_seed
from rrdemo.report.pooled import POOL_NAME, PairedEstimate, Pool, RunDecisions, pool_runs
from rrdemo.report.render import csv_text, markdown_table, pct
from rrdemo.runs.log import RunLog, read_log


def run_name(path: Path) -> str:
    """A run as the tables name it: its folder for a study's `log.jsonl`, else the file's stem."""
    return path.parent.name if path.stem == "log" else path.stem


def _condition_at(log: RunLog, label: str, name: str) -> dict:
    found = [c for c in log.conditions.values() if c["label"] == label]
    if len(found) != 1:
        configs = sorted({c["label"] for c in log.conditions.values()})
        what = "no condition" if not found else f"{len(found)} conditions"
        raise RRError(
            f"{name}: {what} at {label}; a pool takes one condition per run "
            f"(this log has {', '.join(configs)})"
        )
    return found[0]


def _detail(cond: dict) -> str:
    style = logged_setting(cond["config"], "prompt_style")
    policy = logged_setting(cond["config"], "eos_policy")
    return f"{style}, {cond['strength']}, `{policy}`"


def run_decisions(paths: Sequence[Path], label: str) -> list[RunDecisions]:
    """Each log's decisions at `label`, in the order given (a log of RRMaj alone paired with the
    given log that ran its condition with MAJ)."""
    logs = [(run_name(Path(p)), read_log(p)) for p in paths]
    out = []
    for name, log in logs:
        cond = _condition_at(log, label, name)
        key = match_key(cond)
        rr = decisions_by_condition(log, "RRMaj").get(key, {})
        maj = decisions_by_condition(log, "MAJ").get(key)
        seed = condition_seed(cond)
        if maj is None:
            bases = [(n, b) for n, b in logs if key in decisions_by_condition(b, "MAJ")]
            if not bases:
                raise RRError(
                    f"{name} decided RRMaj alone at {label} and no other log given ran MAJ on "
                    "its condition; give the run it varies too"
                )
            maj, seed = decisions_by_condition(bases[0][1], "MAJ")[key], pair_seed(key) + 1
        qids = tuple(q for q in rr if q in maj)
        if not qids:
            raise RRError(f"{name}: no question at {label} has both MAJ's and RRMaj's decision")
        out.append(
            RunDecisions(
                name, cond["task"], label, qids, tuple(maj[q] for q in qids),
                tuple(rr[q] for q in qids), seed, _detail(cond),
            )
        )  # fmt: skip
    return out


def pool_logs(paths: Sequence[Path], label: str) -> Pool:
    """`pool_runs` of the logs' decisions at `label` (seeded by `rrdemo.report.pooled.pool_seed`
    of the pooled runs' counts)."""
    return pool_runs(run_decisions(paths, label))


def _cells(name: str, task: str, detail: str, e: PairedEstimate, pooled: str) -> list[object]:
    return [
        name, task, detail, e.questions, pct(e.maj), pct(e.rrmaj),
        f"{pct(e.delta, True)} [{pct(e.lo, True)}, {pct(e.hi, True)}]", e.maj_only,
        e.rrmaj_only, f"{e.p_mcnemar:.2g}", detectable_text(e.detectable), e.verdict, pooled,
    ]  # fmt: skip


HEADER = [
    "run", "task", "style, injection, EOS", "questions", "MAJ", "RRMaj", "RRMaj - MAJ [95%]",
    "MAJ right only (b)", "RRMaj right only (c)", "McNemar p",
    "smallest lead detectable (80% power)", "verdict", "in the pool",
]  # fmt: skip


def pool_tables(pool: Pool) -> tuple[str, str]:
    """(pooled.md, pooled.csv): each run's row, then the pool's."""
    rows = [
        _cells(r.run.name, r.run.task, r.run.detail, r.estimate, r.left_out or "yes")
        for r in pool.runs
    ]
    flat = [_flat(r.run.name, r.run.task, r.estimate, r.left_out) for r in pool.runs]
    if pool.pooled is not None:
        tasks = ", ".join(r.run.task for r in pool.runs if r.left_out is None)
        count = f"{pool.pooled.strata} runs, stratified by run"
        rows.append(_cells(f"**{POOL_NAME}**", tasks, count, pool.pooled, "-"))
        flat.append(_flat(POOL_NAME, tasks, pool.pooled, None))
    return markdown_table(HEADER, rows), csv_text(flat)


def _flat(name: str, task: str, e: PairedEstimate, left_out: str | None) -> dict[str, object]:
    fields = ("questions", "maj", "rrmaj", "delta", "lo", "hi", "maj_only", "rrmaj_only")
    fields += ("p_mcnemar", "detectable", "boot", "strata")
    return {"run": name, "task": task, **{f: getattr(e, f) for f in fields}, "left_out": left_out}


def pool_text(pool: Pool) -> str:
    """pooled.md: what the pool is, its table, the seeds and resamples behind it."""
    md, _ = pool_tables(pool)
    left = [r for r in pool.runs if r.left_out]
    note = "".join(f" `{r.run.name}` is shown, not pooled: it {r.left_out}." for r in left)
    boot = pool.pooled.boot if pool.pooled else (pool.runs[0].estimate.boot if pool.runs else 0)
    return (
        f"## RRMaj - MAJ at {pool.label}, each run and the runs pooled (the runs' decisions)\n\n"
        "Paired per question; the pool counts each question once, its bootstrap resamples the "
        f"questions within each run ({boot:,} resamples, seeded), McNemar's exact p on the pooled "
        "discordant questions; *smallest lead detectable*: what McNemar's exact test (two-sided, "
        f"5%) finds with 80% power at the row's share of discordant questions.{note}\n\n{md}"
    )


def write_pool_report(paths: Sequence[Path], label: str, out: Path, png: bool = True) -> list[Path]:
    """Write pooled.md, pooled.csv and the forest plot (HTML, PNG) of the logs at `label` into
    `out`, whole or not at all."""
    from rrdemo.report.figures import forest_figure, write_folder
    from rrdemo.report.forest import forest_rows

    pool = pool_logs([Path(p) for p in paths], label)
    files = {"pooled.md": pool_text(pool), "pooled.csv": pool_tables(pool)[1]}
    fig = forest_figure(*forest_rows(pool), pool.label)
    return write_folder(out, files, {"forest": fig}, png, ".pool-")
