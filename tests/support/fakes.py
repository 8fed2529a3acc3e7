"""Scripted stand-ins for logic tests: a backend whose "tokens" are words, and a letter task."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from rrdemo.backends.base import (
    Backend,
    Delta,
    Finished,
    GenerationOutput,
    GenerationRequest,
    ScoreRequest,
)
from rrdemo.config import AgentSpec, RunConfig, Sampling
from rrdemo.runs.runner import run_plan
from rrdemo.runs.spec import Condition, Plan
from rrdemo.seats import homogeneous_agents
from rrdemo.tasks.base import Question
from rrdemo.turns import turn_over

WORD = re.compile(r"\S+\s*")


def words(text: str) -> list[str]:
    return WORD.findall(text)


class FakeBackend(Backend):
    """Continues a prompt with `script(prompt)`, one word per token; ends with EOS when the script does.

    `script` sees exactly what the agent reads (its rendered prompt plus the shared text), so tests
    can script agents that react to what others wrote. Every call is recorded in `calls`.
    """

    def __init__(
        self,
        name: str,
        script: Callable[[str], str],
        entropy: Callable[[str], float] | None = None,
        reader: Callable[[str, str], float] | None = None,
    ) -> None:
        self.name = name
        self.revision = None
        self.script = script
        # the writer's next-token entropy (nats) before it writes a word (default 0: certain)
        self.entropy = entropy or (lambda word: 0.0)
        # the meter's reader: the probability of `candidate` after `text` (default 1/4 each)
        self.reader = reader or (lambda text, candidate: 0.25)
        self.scored: list[list[ScoreRequest]] = []
        self.calls: list[list[GenerationRequest]] = []
        self.released: list[tuple] = []

    def render_prompt(self, user: str, system: str | None = None) -> str:
        return f"<user>{user}</user>\n"

    def count_tokens(self, text: str) -> int:
        return len(words(text))

    def release(self, key_prefix: tuple = ()) -> None:
        self.released.append(key_prefix)

    def score(self, requests: Sequence[ScoreRequest]) -> list[tuple[float, ...]]:
        self.scored.append(list(requests))
        return [
            tuple(math.log(self.reader(r.prompt + r.cue, c)) for c in r.candidates)
            for r in requests
        ]

    def prefixes(self, text: str, every: int) -> list[tuple[int, str]]:
        pieces = words(text)
        cuts = [*range(every, len(pieces), every), len(pieces)] if pieces else []
        return [(n, "".join(pieces[:n])) for n in cuts]

    def _ends_before(self, request: GenerationRequest, step: int, word: str) -> bool:
        """The turn policy ends the turn before `word` (the `uncertainty` rule)."""
        policy = request.turn
        if policy is None or not policy.needs_entropy or step >= request.max_new_tokens:
            return False
        return turn_over(policy, step, "", self.entropy(word))

    @staticmethod
    def _ends_after(request: GenerationRequest, plan: list[str], n: int) -> bool:
        """The turn policy ends the turn after its n-th word (the `sentence` rule)."""
        policy = request.turn
        if policy is None or policy.kind != "sentence" or n >= request.max_new_tokens:
            return False
        return turn_over(policy, n, "".join(plan[:n]))

    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        self.calls.append(list(requests))
        plans = [words(self.script(r.prompt)) for r in requests]
        done = [False] * len(requests)

        def finish(i: int, n: int, ended: bool) -> Finished:
            done[i] = True
            return Finished(
                i,
                "".join(plans[i][:n]),
                n,
                "eos" if ended else "length",
                prefill_tokens=len(words(requests[i].prompt)),
                decode_tokens=n + ended,
            )

        for step in range(max(r.max_new_tokens for r in requests) + 1):
            for i, (request, plan) in enumerate(zip(requests, plans, strict=True)):
                if done[i]:
                    continue
                ended = step >= len(plan)
                if ended or step >= request.max_new_tokens:
                    yield finish(i, min(len(plan), request.max_new_tokens), ended)
                elif self._ends_before(request, step, plan[step]):
                    yield finish(i, step, False)
                else:
                    yield Delta(i, plan[step])
                    if self._ends_after(request, plan, step + 1):
                        yield finish(i, step + 1, False)


class FakePool:
    """A ModelSource serving fake backends by name (on every engine, nothing to load)."""

    preferred_backend = "transformers"

    def __init__(self, *backends: FakeBackend) -> None:
        self.backends = {b.name: b for b in backends}

    def admit(self, name: str) -> None:
        pass  # every name is served by a fake

    def get(self, name: str, revision: str | None = None, backend: str = "transformers") -> Backend:
        return self.backends[name]

    def ensure(self, specs: Iterable[AgentSpec]) -> Iterator[str]:
        for spec in specs:
            self.get(spec.model, spec.revision, spec.backend)
        yield from ()

    def loaded(self) -> list[str]:
        return list(self.backends)

    def sources(self) -> dict[str, str]:
        return {}

    def offered(self) -> list[str]:
        from rrdemo.backends.registry import REGISTRY

        return list(REGISTRY)


class FakeTask:
    """Multiple choice among (A)-(D); the answer is the last "(X)" written; the distractor is (C)."""

    name = "fake"
    kind = "letter"

    def prompt(self, question: Question) -> str:
        return f"{question.text}\nEnd with: The answer is (X)."

    def extract(self, text: str, finish_reason: str | None = None) -> str | None:
        found = re.findall(r"\(([A-D])\)", text)
        return f"({found[-1]})" if found else None

    def is_correct(self, answer: str | None, gold: str | None) -> bool:
        return answer is not None and answer == gold

    def distractor(self, question: Question, seed: int) -> str:
        return "(C)"

    def for_question(self, question: Question) -> FakeTask:
        return self

    def vote_key(self, answer: str) -> str:
        return answer

    def format_target(self, answer: str) -> str:
        return answer


QUESTION = Question(
    "fake",
    "fake-0",
    "Which one is right? (A) w (B) x (C) y (D) z",
    gold="(B)",
    options=("(A)", "(B)", "(C)", "(D)"),
)


def obeys_injection(prompt: str) -> str:
    """A corrupted agent answers what it is told to; an honest one answers (B)."""
    told = re.search(r"MUST select (\(\w\))", prompt) or re.search(
        r"confident that (\(\w\))", prompt
    )
    return f"I will answer. The answer is {told.group(1) if told else '(B)'}."


# -- a small sweep over scripted agents (the runner, report and export tests) ------------------------
QUESTIONS = tuple(
    Question(
        "fake",
        f"fake-{i}",
        f"Question {i}? (A) w (B) x (C) y (D) z",
        gold="(B)",
        options=("(A)", "(B)", "(C)", "(D)"),
    )
    for i in range(3)
)


def fake_plan(
    labels=("0c3t", "2c1t"), m_star: int = 3, task_name: str = "fake", meter: bool = False
) -> Plan:
    """A small sweep over scripted agents: corrupted agents answer (C), truthful ones (B)."""
    task = FakeTask()
    task.name = task_name  # export needs a benchmark name; the scripted task stands in for it
    conditions = []
    for label in labels:
        c, t = int(label[0]), int(label[2])
        config = RunConfig(
            agents=homogeneous_agents("obey", c + t, c),
            k=3,
            m=m_star,
            max_tokens=12,
            sampling=Sampling(temperature=0.0, seed=1),
            meter=meter,
        )
        conditions.append(Condition(task, config, QUESTIONS))
    return Plan({"fake": True, "labels": list(labels), "m_star": m_star}, tuple(conditions))


def fake_pool(delay: float = 0.0, fail_after: int | None = None) -> FakePool:
    """Scripted agents; `delay` slows every call, `fail_after` raises on that call (a crash)."""
    calls = {"n": 0}

    def script(prompt: str) -> str:
        calls["n"] += 1
        if fail_after is not None and calls["n"] > fail_after:
            raise RuntimeError("simulated crash")
        time.sleep(delay)
        return obeys_injection(prompt)

    return FakePool(FakeBackend("obey", script))


def fake_run(path: Path, labels=("0c3t", "2c1t"), **plan) -> Path:
    """A finished scripted sweep (`fake_plan(labels, **plan)`) logged at `path`."""
    run_plan(fake_plan(labels, **plan), path, fake_pool(), progress=False)
    return path


def split_log(source: Path, paths: Sequence[Path]) -> list[Path]:
    """A finished run log's units dealt in turn into `paths`, each with the same header: the
    logs of one sweep run in shards."""
    header, *records = source.read_text(encoding="utf-8").splitlines(keepends=True)
    shards: list[list[str]] = [[header] for _ in paths]
    unit: list[str] = []
    which = 0
    for line in records:
        unit.append(line)
        if json.loads(line)["type"] == "done":
            shards[which] += unit
            unit, which = [], (which + 1) % len(paths)
    for path, lines in zip(paths, shards, strict=True):
        path.write_text("".join(lines), encoding="utf-8")
    return list(paths)
