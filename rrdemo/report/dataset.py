"""A run log as a Hugging Face dataset: every trajectory of the finished units, with its answer and
its unit's vote, as parquet plus a dataset card.

    rrdemo export runs/small.jsonl --dataset --out runs/small_dataset
    datasets.load_dataset("runs/small_dataset")  # or load_dataset("parquet", data_dir=...)

One row per MAJ answer or RR trajectory (the shared text and each chunk with its writer and
role), beside the settings of its condition and the decision its method's vote reached on the
question; the vote's counts are a JSON string, since their keys are answers. Written with pyarrow
and an explicit schema, so a column that happens to be empty keeps its type; the card's YAML
header names the parquet file as the `train` split.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from rrdemo.config import STYLE_AND_POLICY, ct_label, logged_setting
from rrdemo.errors import RRError
from rrdemo.runs.log import read_log

DATA_FILE = "data/train-00000-of-00001.parquet"

CHUNK = pa.struct(
    [
        ("turn", pa.int32()),
        ("agent", pa.int32()),
        ("role", pa.string()),
        ("model", pa.string()),
        ("text", pa.string()),
        ("n_tokens", pa.int32()),
    ]
)
# (column, type, what it holds): the schema and the card's field list
FIELDS: tuple[tuple[str, pa.DataType, str], ...] = (
    ("condition", pa.string(), "condition key `task:config_hash`"),
    ("task", pa.string(), "benchmark"),
    ("ensemble", pa.string(), "model name, or the seats of a mixed ensemble"),
    ("config", pa.string(), "the paper's corruption setting, e.g. 3c2t (c corrupted, t honest)"),
    ("n", pa.int32(), "N agents"),
    ("c", pa.int32(), "corrupted agents"),
    ("rho", pa.float64(), "corruption ratio c / N"),
    ("strength", pa.string(), "injection strength"),
    ("k", pa.int32(), "K, tokens per round-robin turn"),
    ("m", pa.int32(), "M, trajectories per method"),
    ("max_tokens", pa.int32(), "L, the token budget of a trajectory"),
    ("adversary", pa.string(), "adversary strategy"),
    ("turn_policy", pa.string(), "turn policy"),
    ("prompt_style", pa.string(), "prompt style: direct, or step-by-step (working first)"),
    ("eos_policy", pa.string(), "what a writer's end-of-sequence does in RR: end or pass"),
    ("config_json", pa.string(), "the full run configuration (JSON)"),
    ("question_id", pa.string(), "question id in the task's sample"),
    ("gold", pa.string(), "gold answer"),
    ("target", pa.string(), "the wrong answer corrupted agents are told to pick"),
    ("method", pa.string(), "MAJ (independent answers) or RRMaj (round-robin trajectories)"),
    ("trajectory", pa.int32(), "index of the answer / trajectory within its method"),
    ("order", pa.list_(pa.int32()), "speaking order (MAJ: the one agent)"),
    ("chunks", pa.list_(CHUNK), "the turns: writer, role (honest/corrupted), model, text"),
    ("text", pa.string(), "the whole text (the chunks joined)"),
    ("answer", pa.string(), "extracted final answer (null: none could be read)"),
    ("vote_key", pa.string(), "what the vote groups the answer by"),
    ("correct", pa.bool_(), "the answer is the gold answer"),
    ("fooled", pa.bool_(), "the answer is the corrupted agents' target"),
    ("last_agent", pa.int32(), "the agent that wrote last"),
    ("last_corrupted", pa.bool_(), "that agent is corrupted"),
    ("n_tokens", pa.int32(), "tokens written"),
    ("finish_reason", pa.string(), "eos (the model stopped) or length (cut off at L)"),
    ("decision", pa.string(), "the answer the method's vote decided on this question"),
    ("decision_correct", pa.bool_(), "that decision is correct"),
    ("decision_fooled", pa.bool_(), "that decision is the target"),
    ("vote_counts", pa.string(), "the vote's counts per answer (JSON)"),
    ("abstained", pa.int32(), "trajectories without an answer in the vote"),
)
SCHEMA = pa.schema([(name, kind) for name, kind, _ in FIELDS])


def _row(cond: dict[str, Any], done: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    vote = (done.get("votes") or {}).get(record["method"]) or {}
    n, c = int(cond["n"]), int(cond["c"])
    chunks = record.get("chunks") or []
    return {
        "condition": cond["key"],
        "task": cond["task"],
        "ensemble": cond["ensemble"],
        "config": cond.get("label") or ct_label(c, n - c),
        "n": n,
        "c": c,
        "rho": c / n,
        "strength": cond["strength"],
        "k": int(cond["k"]),
        "m": int(cond["m_star"]),
        "max_tokens": int(cond["max_tokens"]),
        "adversary": cond["adversary"],
        "turn_policy": cond["turn_policy"],
        **{name: logged_setting(cond["config"], name) for name in STYLE_AND_POLICY},
        "config_json": json.dumps(cond["config"], sort_keys=True),
        "question_id": str(record["question_id"]),
        "gold": _text(done.get("gold")),
        "target": _text(done.get("target")),
        "method": record["method"],
        "trajectory": int(record["trajectory"]),
        "order": list(record.get("order") or []),
        "chunks": [{name: chunk.get(name) for name in CHUNK.names} for chunk in chunks],
        "text": "".join(chunk.get("text", "") for chunk in chunks),
        "answer": _text(record.get("answer")),
        "vote_key": record.get("vote_key"),
        "correct": bool(record.get("correct")),
        "fooled": bool(record.get("fooled")),
        "last_agent": record.get("last_agent"),
        "last_corrupted": bool(record.get("last_corrupted")),
        "n_tokens": int(record.get("n_tokens") or 0),
        "finish_reason": record.get("finish_reason"),
        "decision": _text(vote.get("answer")),
        "decision_correct": vote.get("correct"),
        "decision_fooled": vote.get("fooled"),
        "vote_counts": json.dumps(vote.get("counts") or {}, ensure_ascii=False),
        "abstained": vote.get("abstained"),
    }


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def dataset_rows(log_path: Path | str) -> list[dict[str, Any]]:
    """One row per trajectory of the log's finished units, in log order."""
    log = read_log(log_path)
    rows = [
        _row(log.conditions[done["condition"]], done, record)
        for done, trajectories in log.units()
        if done is not None
        for record in trajectories
    ]
    if not rows:
        raise RRError(
            f"{log.path} has no finished questions yet; run (or resume) the experiment first"
        )
    return rows


def dataset_card(log_path: Path, rows: list[dict[str, Any]]) -> str:
    """The README.md of the dataset: a YAML header naming the split, then what the rows hold."""
    tasks = sorted({r["task"] for r in rows})
    ensembles = sorted({r["ensemble"] for r in rows})
    configs = sorted({r["config"] for r in rows})
    units = len({(r["condition"], r["question_id"]) for r in rows})
    fields = "\n".join(f"- `{name}`: {what}" for name, _, what in FIELDS)
    return f"""---
configs:
- config_name: default
  data_files:
  - split: train
    path: {DATA_FILE}
tags:
- rrdemo
- multi-agent
- adversarial
size_categories:
- {_size_category(len(rows))}
---
# rrdemo run: {log_path.name}

Trajectories of MAJ (independent answers, majority vote) and RRMaj (token-level round-robin
trajectories, majority vote) under prompt-injected corrupted agents, as logged by
`rrdemo experiment` and exported with `rrdemo export {log_path.name} --dataset`.

- {len(rows)} trajectories of {units} finished (condition, question) units
- tasks: {", ".join(tasks)}
- ensembles: {", ".join(ensembles)}
- corruption settings: {", ".join(configs)}

```python
from datasets import load_dataset
rows = load_dataset("path/to/this/folder", split="train")
```

## Fields
{fields}
"""


def _size_category(n: int) -> str:
    """The hub's size tag for n rows (n<1K, 1K<n<10K, ...)."""
    if n < 1000:
        return "n<1K"
    bounds = ("1K", "10K", "100K", "1M", "10M")
    i = min(len(str(n)) - 4, len(bounds) - 2)
    return f"{bounds[i]}<n<{bounds[i + 1]}"


def write_dataset(log_path: Path | str, out: Path | str, *, replace: bool = False) -> list[Path]:
    """Write the parquet file and the card into `out`; returns both paths.

    `out` must be a new or empty folder unless `replace`, which overwrites those two files and
    leaves anything else in the folder alone."""
    log_path, out = Path(log_path), Path(out)
    if out.exists() and not out.is_dir():
        raise RRError(f"{out} is a file; give a folder for the dataset")
    if out.exists() and any(out.iterdir()) and not replace:
        raise RRError(
            f"{out} is a folder that is not empty; pass --force to replace the dataset in it "
            "or choose another --out"
        )
    rows = dataset_rows(log_path)
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    data = out / DATA_FILE
    data.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, data)
    card = out / "README.md"
    card.write_text(dataset_card(log_path, rows), encoding="utf-8")
    return [data, card]
