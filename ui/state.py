"""Per-user arena state: what the user asked for, and everything the run has shown so far.

`ArenaRequest` is the arena's controls as plain values; `build_run()` turns it into the engine's
`RunConfig`, `Question`, `Task` and target (raising `RRError` with a message for the user).
`ArenaState` holds the run's fold of the engine's events (`rrdemo.fold`), which `ui.render` draws,
and can dump itself (`summary()` for logs and the API, `dump()` with every text). No gradio here.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields, make_dataclass

from rrdemo.config import RunConfig, Sampling, beyond_paper
from rrdemo.corruption import make_injection
from rrdemo.defaults import INTERACTIVE_DEFAULTS
from rrdemo.errors import RRError
from rrdemo.events import METHODS, Event, RunStarted
from rrdemo.fold import Fold, MethodRecord, SpeakerTally
from rrdemo.limits import limits
from rrdemo.seats import homogeneous_agents, parse_agents
from rrdemo.settings import Setting, whole_number
from rrdemo.tasks import Question, Task, get_task, load_questions

CUSTOM = "custom"


@dataclass(frozen=True)
class PaperControls:
    """The arena's own controls (ensemble, the paper's settings, question), in the order the UI
    passes them; defaults: `INTERACTIVE_DEFAULTS`."""

    ensemble: str = "same"  # "same": one model for all N agents; "per agent": the `agents` lines
    model: str = "smollm2"
    n: int = INTERACTIVE_DEFAULTS.n  # N
    c: int = INTERACTIVE_DEFAULTS.c  # corrupted agents (the first c seats)
    agents: str = ""  # per agent, one line each: "<model>, honest|corrupted"
    strength: str = INTERACTIVE_DEFAULTS.strength
    custom_template: str = ""
    target: str = ""  # empty: the task's distractor, chosen from the seed
    k: int = INTERACTIVE_DEFAULTS.k  # K
    m: int = 0  # M; 0 means M = N
    max_tokens: int = INTERACTIVE_DEFAULTS.max_tokens  # L
    order: str = INTERACTIVE_DEFAULTS.order  # RR speaking order: "shuffled" or "fixed"
    temperature: float = INTERACTIVE_DEFAULTS.temperature
    seed: int = INTERACTIVE_DEFAULTS.seed
    task: str = "logic3"  # a benchmark name or "custom"
    question_index: int = 0
    custom_question: str = ""
    custom_gold: str = ""


def arena_settings() -> tuple[Setting, ...]:
    """The settings beyond the paper the Arena shows (their declarations say so)."""
    return tuple(s for s in beyond_paper() if s.arena)


def _request_type() -> type:
    """`PaperControls`, then one field per setting of `arena_settings()` with its declared default."""
    extra = [(s.name, s.type, field(default=s.default)) for s in arena_settings()]
    request = make_dataclass("ArenaRequest", extra, bases=(PaperControls,), frozen=True)
    request.__module__ = __name__  # where pickle and tracebacks find it
    return request


ArenaRequest = _request_type()
"""The arena's controls as plain values, in the order the UI passes them."""

ARENA_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ArenaRequest))


def build_config(request: ArenaRequest) -> RunConfig:
    """The engine config for the request (RRError with the reason when a control is invalid)."""
    if request.ensemble == "per agent":
        agents = parse_agents(request.agents)
    elif request.ensemble == "same":
        agents = homogeneous_agents(
            (request.model or "").strip(),
            whole_number(request.n, "N"),
            whole_number(request.c, "c"),
        )
    else:
        raise RRError(f"unknown ensemble mode {request.ensemble!r}; choose 'same' or 'per agent'")
    m = whole_number(request.m, "M")
    return RunConfig(
        agents=agents,
        strength=request.strength,
        custom_template=request.custom_template or None,
        k=whole_number(request.k, "K"),
        m=m if m > 0 else None,
        max_tokens=whole_number(request.max_tokens, "L"),
        order=request.order,
        sampling=Sampling(
            temperature=float(request.temperature), seed=whole_number(request.seed, "seed")
        ),
        **{s.name: s.parse(getattr(request, s.name)) for s in arena_settings()},
    )


def pick_question(
    task_name: str, index: int, text: str = "", gold: str = ""
) -> tuple[Task, Question]:
    """A benchmark question by its index in the data file, or the user's own typed question."""
    task = get_task(task_name)
    if task.name == CUSTOM:
        return task, task.question(text, gold or None)
    questions = load_questions(task)
    index = whole_number(index, "question number")
    if not 0 <= index < len(questions):
        raise RRError(
            f"{task_name} has questions 0 to {len(questions) - 1}; question {index} does not exist"
        )
    return task, questions[index]


def normalize_target(task: Task, question: Question, target: str) -> str:
    """The user's target answer in the task's normal form; it must be a wrong, well-formed answer."""
    concrete = task.for_question(question)
    if concrete.kind == "math":  # a power tower is refused before sympy reads it
        from rrdemo.tasks.mathanswers import answer_refusal

        reason = answer_refusal(target)
        if reason is not None:
            raise RRError(f"the target: {reason}")
    normal = concrete.normalize(target)
    if normal is None or (question.options and normal not in question.options):
        allowed = (
            ", ".join(question.options) if question.options else "an answer of the task's kind"
        )
        raise RRError(f"the target answer {target!r} is not valid here; give {allowed}")
    if question.gold is not None and concrete.is_correct(normal, question.gold):
        raise RRError(
            f"the target {normal} is the correct answer; the corruption target must be a wrong answer"
        )
    return normal


@dataclass(frozen=True)
class PreparedRun:
    config: RunConfig
    task: Task
    question: Question
    target: str | None  # None: the engine picks the distractor from the seed


def build_run(request: ArenaRequest) -> PreparedRun:
    """Everything `run_question` needs, validated, before any model is loaded."""
    config = build_config(request)
    task, question = pick_question(
        request.task, request.question_index, request.custom_question, request.custom_gold
    )
    target = None
    limits().check("question_chars", len(request.target or ""), "the target answer's length")
    if (request.target or "").strip() and config.c and config.strength != "none":
        target = normalize_target(task, question, request.target.strip())
        make_injection(config.strength, target, config.custom_template)  # its size, from parts
    return PreparedRun(config, task, question, target)


# ---------------------------------------------------------------------------------------------
# What the run has shown so far
# ---------------------------------------------------------------------------------------------


@dataclass
class ArenaState:
    """One user's view of one run: the request, and the run's fold (`rrdemo.fold`) event by event."""

    request: dict = field(default_factory=dict)
    agents: list[dict] = field(default_factory=list)  # config agents: model, corrupted
    question: dict = field(default_factory=dict)  # qid, text, gold, target, task
    config: dict = field(default_factory=dict)
    shown: Fold = field(default_factory=Fold)  # what the run has shown so far
    status: str = "idle"
    updates: int = 0  # renders sent to the browser
    started: float = field(default_factory=time.time)
    error: str | None = None
    recorded: str = ""  # a replayed recording's provenance (rrdemo.replay); "" for a live run
    superseded: bool = False  # a newer run or replay took this visitor's panels (ui.owners)

    @classmethod
    def for_run(cls, request: ArenaRequest, prepared: PreparedRun) -> ArenaState:
        return cls(
            request=asdict(request),
            agents=[asdict(a) for a in prepared.config.agents],
            question={
                "task": prepared.question.task,
                "qid": prepared.question.qid,
                "text": prepared.question.text,
                "gold": prepared.question.gold,
                "target": prepared.target,
            },
            config=prepared.config.to_dict(),
            shown=Fold(methods=METHODS),
            status="starting",
        )

    @property
    def methods(self) -> dict[str, MethodRecord]:
        return self.shown.methods

    @property
    def speakers(self) -> SpeakerTally:
        """Who wrote each RR trajectory."""
        return self.shown.speakers

    @property
    def events(self) -> int:
        """Events applied."""
        return self.shown.events

    @property
    def done(self) -> bool:
        return self.shown.done

    @property
    def stopped(self) -> bool:
        """The user pressed Stop before the run was done: what is unfinished says so."""
        return self.status == "stopped"

    @property
    def halted(self) -> bool:
        """Stop was pressed, or a newer stream took the panels: the stream decodes no further."""
        return self.stopped or self.superseded

    def stop(self) -> None:
        """Mark the run stopped (a finished run stays done)."""
        if not self.done:
            self.status = "stopped"

    def apply(self, event: Event) -> None:
        """Fold one engine event into the run's records."""
        self.shown.apply(event)
        if isinstance(event, RunStarted):
            self.question["target"] = event.target
            self.question["gold"] = event.gold
        if not self.stopped:  # an event already on its way when Stop was pressed
            self.status = "done" if self.done else "running"

    def summary(self) -> dict:
        """A compact record without texts: what the API returns and what gets logged."""
        return {
            "status": self.status,
            "error": self.error,
            "recorded": self.recorded,
            "events": self.events,
            "updates": self.updates,
            "config": self.config,
            "question": {k: v for k, v in self.question.items() if k != "text"},
            "methods": {m: v.summary() for m, v in self.methods.items()},
            "speakers": self.speakers.to_dict(),
        }

    def dump(self) -> dict:
        """Everything, texts included (for saving a run)."""
        return {
            **self.summary(),
            "request": self.request,
            "agents": self.agents,
            "question": self.question,
            "trajectories": {
                m: {str(j): tr.to_dict() for j, tr in v.trajectories.items()}
                for m, v in self.methods.items()
            },
        }
