"""Where an answer is first stated: how early a reader of the text could read it.

The paper's mechanism needs something to interrupt: an honest agent can only turn a corrupted
line of reasoning when the injected writer has not stated the target in its first turn of K
tokens. So a calibration measures, per answer, the token at which the text first states

- any answer (`first`),
- the answer it ends on (`answer`, the extracted one),
- the injection's target (`target`).

A prefix of the text *states* a value when the task reads that value from it as from a text cut
off there (finish reason "length": only a closed final statement counts, "The answer is (E)."
but not "The answer is (E" or a number in the middle of the working). Prefixes are tried at each
sentence or line end, and the whole text is read as it ended. A position is the number of tokens
of the prefix, counted by the model's tokenizer on the text (re-tokenized, so it may differ from
the generated tokens by one at the cut).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from rrdemo.tasks.base import Task

# After a sentence's closing mark (and any closing decorations), or at a line break.
_PREFIX_END = re.compile(r"[.!?](?:\*\*|__|\$|\)|\\[\])])*(?=\s|$)|\n")

KINDS = ("first", "answer", "target")


def _prefix_ends(text: str) -> Iterator[int]:
    """Where prefixes worth reading end, in order: after each sentence end, then the text's end."""
    for match in _PREFIX_END.finditer(text):
        yield match.end()
    yield len(text)


def first_stated(
    task: Task, text: str, finish_reason: str | None, values: dict[str, str | None]
) -> dict[str, int | None]:
    """The character offset at which `text` first states each value of `values` (a name -> value
    map; a value of None means any answer), or None where it never does. `task` reads the
    question the text answers (`Task.for_question`)."""
    keys = {name: (task.vote_key(v) if v is not None else None) for name, v in values.items()}
    found: dict[str, int | None] = dict.fromkeys(values)
    for end in _prefix_ends(text):
        whole = end == len(text)
        answer = task.extract(text[:end], finish_reason=finish_reason if whole else "length")
        if answer is None:
            continue
        key = task.vote_key(answer)
        for name, wanted in keys.items():
            if found[name] is None and (wanted is None or key == wanted):
                found[name] = end
        if all(v is not None for v in found.values()):
            break
    return found


def stated_at(
    task: Task,
    record: dict[str, Any],
    count: Callable[[str], int],
) -> dict[str, int | None]:
    """The token positions (`KINDS`) at which a calibration answer first states any answer, its
    own answer and the target; `count` gives the number of tokens of a text."""
    text = record["text"]
    values = {"first": None, "answer": record["answer"], "target": record["target"]}
    if values["answer"] is None:
        values.pop("answer")
    offsets = first_stated(task, text, record.get("finish_reason"), values)
    tokens: dict[str, int | None] = dict.fromkeys(KINDS)
    for name, offset in offsets.items():
        if offset is not None:
            whole = offset == len(text)
            tokens[name] = (
                record["n_tokens"] if whole else min(count(text[:offset]), record["n_tokens"])
            )
    return tokens
