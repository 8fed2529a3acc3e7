"""Chat templates rendered where their cost is bounded.

A chat template is a Jinja program that comes with the model: a hub repo a visitor names brings
its own, and a loop nested in a loop runs for as long as it likes while holding the interpreter
lock. Templates of models loaded from the hub therefore render in a worker process under CPU,
memory and wall-clock limits (`rrdemo.worker`), after a cheap check refuses the obvious attacks
(a template too long, loops nested too deep, a `range` loop inside another); a template past its
limits is killed and the run refused with one sentence. Shipped and local models render here.
Both renderers are the ones the models use: transformers' `render_jinja_template` (what
`apply_chat_template` calls) and llama.cpp's GGUF template in a Jinja sandbox.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from rrdemo.errors import RRError
from rrdemo.worker import Refused, WorkLimits, shared_pool

TEMPLATE_LIMITS = WorkLimits(cpu_seconds=5, wall_seconds=10.0, memory_bytes=1 << 30)
MAX_TEMPLATE_CHARS = 100_000  # the longest chat template read (common ones: 1-20 kB)
MAX_LOOP_DEPTH = 5  # loops nested deeper than this are refused (common templates: 2-3)
_PRELOAD = ("jinja2", "transformers.utils.chat_template_utils", "rrdemo.backends.templates")
_BLOCK = re.compile(r"\{%-?\s*(for|endfor)\b([^%]*)", re.IGNORECASE)


def template_refusal(template: str) -> str | None:
    """Why chat template `template` is not rendered at all (one clause), or None."""
    if len(template) > MAX_TEMPLATE_CHARS:
        return f"it is {len(template):,} characters long, over the {MAX_TEMPLATE_CHARS:,} read"
    open_loops: list[bool] = []  # per open loop: whether it is a range loop
    for match in _BLOCK.finditer(template):
        if match.group(1).lower() == "endfor":
            if open_loops:
                open_loops.pop()
            continue
        ranged = "range" in match.group(2)
        if ranged and any(open_loops):
            return "it nests a range loop inside another"
        open_loops.append(ranged)
        if len(open_loops) > MAX_LOOP_DEPTH:
            return f"it nests loops more than {MAX_LOOP_DEPTH} deep"
    return None


def render_transformers(tokenizer: Any, messages: list[dict], thinking: bool, bounded: bool) -> str:
    """What `tokenizer.apply_chat_template(messages, add_generation_prompt=True, ...)` renders;
    in the template worker when `bounded`."""
    if not bounded:
        return tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, enable_thinking=thinking
        )
    template = tokenizer.get_chat_template()
    variables = {**tokenizer.special_tokens_map, "enable_thinking": thinking}
    return _bounded("transformers", template, messages, variables)


def render_gguf(
    template: str, name: str, messages: list[dict], bos: str, eos: str, bounded: bool
) -> str:
    """What llama.cpp's GGUF chat template of model `name` renders; in the worker when `bounded`."""
    variables = {"bos_token": bos, "eos_token": eos, "name": name}
    if not bounded:
        return gguf_template(template, messages, variables)
    return _bounded("gguf", template, messages, variables)


def _bounded(kind: str, template: str, messages: list[dict], variables: dict[str, Any]) -> str:
    reason = template_refusal(template)
    if reason is not None:
        raise RRError(f"this model's chat template is not rendered: {reason}")
    key = json.dumps([messages, variables], sort_keys=True, default=str)
    try:
        return _render_in_worker(kind, template, key)
    except Refused as exc:
        raise RRError(f"this model's chat template was stopped: {exc}") from None


@lru_cache(maxsize=512)
def _render_in_worker(kind: str, template: str, key: str) -> str:
    """One render in the template worker, kept (a refusal is not kept)."""
    messages, variables = json.loads(key)
    pool = shared_pool("templates", _PRELOAD, TEMPLATE_LIMITS)
    render = transformers_template if kind == "transformers" else gguf_template
    return pool.call(render, template, messages, variables)


def transformers_template(template: str, messages: list[dict], variables: dict[str, Any]) -> str:
    """transformers' own rendering of a chat template (run in the worker)."""
    from transformers.utils.chat_template_utils import render_jinja_template

    messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
    rendered, _ = render_jinja_template(
        conversations=[messages], chat_template=template, add_generation_prompt=True, **variables
    )
    return rendered[0]


def gguf_template(template: str, messages: list[dict], variables: dict[str, Any]) -> str:
    """A GGUF's chat template in a Jinja sandbox, as llama.cpp's chat formatter reads it."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    name = variables.get("name", "the model")

    def raise_exception(message: str) -> None:
        raise RRError(f"{name}'s chat template refused the prompt: {message}")

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template).render(
        messages=messages,
        add_generation_prompt=True,
        bos_token=variables["bos_token"],
        eos_token=variables["eos_token"],
    )
