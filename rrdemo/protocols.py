"""MAJ, RR and RRMaj as generators of events.

`majority_vote` lets every agent answer on its own, then takes the plurality. `round_robin` runs M
shared trajectories in lockstep: at turn t, agent order[t % N] of each trajectory reads its own
prompt plus everything written so far and adds K tokens (fewer when the run's turn policy,
rrdemo.turns, ends the turn early); a trajectory ends at end-of-sequence
(with eos_policy "pass": once N writers in a row pass) or after L decoded tokens; RRMaj then
takes the plurality of the M trajectories' answers (M = 1 is plain RR). `run_question` builds the agents and runs both methods on one question.
"""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from rrdemo.adversary import get_strategy
from rrdemo.agents import Agent, ModelSource, backend_for, build_agents
from rrdemo.backends.base import Finished
from rrdemo.chunks import ChunkRequest, ComputeCounter, write_chunks
from rrdemo.config import RunConfig
from rrdemo.corruption import make_injection
from rrdemo.events import (
    METHODS,
    AnswerExtracted,
    ComputeUsed,
    Decision,
    Event,
    Method,
    Observer,
    RunStarted,
    TrajectoryStarted,
    Vote,
)
from rrdemo.meter import observer_for
from rrdemo.speakers import trajectory_order
from rrdemo.tasks.base import Question, Task
from rrdemo.tasks.benchmarks import styled_prompt
from rrdemo.voting import derive_seed, grouped_keys, plurality


class Chunk(NamedTuple):
    """A part of a shared text: `n_tokens` tokens of `agent`'s tokenizer."""

    agent: int
    text: str
    n_tokens: int


@dataclass
class Trajectory:
    """One shared text and who wrote each part of it."""

    index: int
    order: tuple[int, ...]  # agent speaking order; turn t belongs to order[t % N]
    chunks: list[Chunk] = field(default_factory=list)
    n_tokens: int = 0
    decoded: int = 0  # decoding steps spent on it (n_tokens plus any end-of-sequence tokens)
    passes: int = 0  # turns in a row that added no token (eos_policy "pass")
    finish_reason: str | None = None  # "eos" or "length" once done

    @property
    def text(self) -> str:
        return "".join(chunk.text for chunk in self.chunks)

    @property
    def last_writer(self) -> int:
        """The agent who wrote the last token (passes under eos_policy "pass" write none)."""
        return next((c.agent for c in reversed(self.chunks) if c.n_tokens), self.chunks[-1].agent)

    @property
    def done(self) -> bool:
        return self.finish_reason is not None


class Final(NamedTuple):
    """How one trajectory (RR) or answer (MAJ) ended, ready for answer extraction."""

    trajectory: int
    text: str
    n_tokens: int
    finish_reason: str | None  # "eos" or "length"
    last_agent: int  # who wrote the last token


def _scored_equal(task: Task):
    """Whether the scorer calls two answers equal, either one taken as the gold."""
    return lambda a, b: task.is_correct(a, b) or task.is_correct(b, a)


def _conclude(
    method: Method,
    finals: Sequence[Final],
    agents: Sequence[Agent],
    task: Task,
    question: Question,
    target: str | None,
    tie_seed: int,
) -> Iterator[Event]:
    """Extract each final text's answer, vote, decide.

    Votes are grouped by the task's vote key (MATH: "sym:Integer(5)" for "5" and "5.0"), and
    answers the scorer calls equal ("10\\%" and "10") share one key (`grouped_keys`); but what is
    shown, counted and scored is an answer: behind each key stands the first answer extracted
    with that key (trajectory order, so deterministic). The decision's answer is the winning
    key's answer, scored with `is_correct` against the gold exactly as each trajectory is.
    """
    answers = [task.extract(f.text, finish_reason=f.finish_reason) for f in finals]
    target_key = task.vote_key(target) if target else None
    keys = grouped_keys(answers, task.vote_key, _scored_equal(task), [target] if target else [])
    shown: dict[str, str] = {}  # vote key -> the first answer extracted with that key
    for final, answer, answer_key in zip(finals, answers, keys, strict=True):
        if answer_key is not None:
            shown.setdefault(answer_key, answer)
        yield AnswerExtracted(
            method=method,
            trajectory=final.trajectory,
            answer=answer,
            correct=task.is_correct(answer, question.gold) if question.gold is not None else None,
            fooled=answer_key is not None and answer_key == target_key,
            last_agent=final.last_agent,
            last_corrupted=agents[final.last_agent].corrupted,
            n_tokens=final.n_tokens,
            finish_reason=final.finish_reason,
            text=final.text,
            key=answer_key,
        )
    vote = plurality(keys, tie_seed)
    yield Vote(method, {shown[k]: n for k, n in vote.counts.items()}, vote.abstained)
    winner = shown[vote.winner] if vote.winner is not None else None
    yield Decision(
        method=method,
        answer=winner,
        correct=task.is_correct(winner, question.gold) if question.gold is not None else None,
        fooled=vote.winner is not None and vote.winner == target_key,
        tied=tuple(shown[k] for k in vote.tied),
        key=vote.winner,
    )


def majority_vote(
    agents: Sequence[Agent],
    question: Question,
    task: Task,
    config: RunConfig,
    target: str | None,
    *,
    samples: int | None = None,
    run_id: str = "",
    after_turn: Callable[[int], Iterator[Event]] = Observer().after_turn,
    stop: threading.Event | None = None,
) -> Iterator[Event]:
    """MAJ: `samples` independent answers (default N; answer j comes from agent j mod N), plurality vote.

    `after_turn(t)` is the observers' hook (`rrdemo.events.Observer`), called before anything is
    written (t = -1) and once the answers are (t = 0). Setting `stop` ends the run with `Stopped`
    after the decoding step under way."""
    n_samples = samples or len(agents)
    counter = ComputeCounter()
    # Every answer is its own trajectory, written by one agent in one turn of up to L tokens.
    chunks = []
    for j in range(n_samples):
        agent = agents[j % len(agents)]
        yield TrajectoryStarted("MAJ", j, (agent.index,))
        key = (run_id, "MAJ", question.qid, j)
        chunks.append(ChunkRequest(j, agent, agent.prompt, config.max_tokens, key))
    yield from after_turn(-1)  # observers read before anything is written
    # All answers are decoded together, batched per model.
    results = yield from write_chunks("MAJ", 0, chunks, config, counter, stop=stop)
    finals = [
        Final(c.trajectory, out.text, out.n_tokens, out.finish_reason, c.agent.index)
        for c, out in zip(chunks, results, strict=True)
    ]
    yield from after_turn(0)  # ... and once the answers are written
    yield from _conclude(
        "MAJ",
        finals,
        agents,
        task,
        question,
        _target(config, question, target),
        _tie(config, question, "MAJ"),
    )
    yield counter.event("MAJ")


def _end_of_turn(policy: str, tr: Trajectory, out: Finished, n: int, budget: int) -> str | None:
    """Why the trajectory ends after this turn ("eos", "length"), or None when it goes on.

    A trajectory ends once it has spent its L decoding steps. A writer's end-of-sequence ends the
    trajectory under policy "end"; under "pass" it ends only the writer's turn, and the trajectory
    ends when N writers in a row pass without adding a token. Counting decoding steps (an EOS
    token is one) keeps RRMaj within M x L decoded tokens whatever the policy.
    """
    tr.passes = tr.passes + 1 if out.n_tokens == 0 else 0
    if out.finish_reason == "eos" and (policy == "end" or tr.passes >= n):
        return "eos"
    if tr.decoded >= budget:
        return "length"
    return None


def round_robin(
    agents: Sequence[Agent],
    question: Question,
    task: Task,
    config: RunConfig,
    target: str | None,
    *,
    trajectories: int | None = None,
    run_id: str = "",
    after_turn: Callable[[int], Iterator[Event]] = Observer().after_turn,
    stop: threading.Event | None = None,
) -> Iterator[Event]:
    """RRMaj: M token-level round-robin trajectories (default `config.resolved_m`), then plurality.

    `after_turn(t)` is the observers' hook (`rrdemo.events.Observer`), called before anything is
    written (t = -1) and after each turn t. Setting `stop` ends the run with `Stopped` after the
    decoding step under way."""
    n, k, budget = len(agents), config.k, config.max_tokens
    m = trajectories or config.resolved_m
    policy = config.turn if config.turn.adaptive else None  # None: every turn is K tokens
    counter = ComputeCounter()
    # Each trajectory gets its speaking order: seat order or a seeded shuffle, reseated by the
    # adversary strategy (e.g. "last-word" gives a corrupted agent the last turn).
    shared = []
    for j in range(m):
        order = trajectory_order(config, question.qid, j)
        shared.append(Trajectory(j, order))
        yield TrajectoryStarted("RRMaj", j, order)
    yield from after_turn(-1)  # observers read before anything is written
    for turn in itertools.count():
        active = [tr for tr in shared if not tr.done]
        if not active:
            break
        # The agent whose turn it is in each unfinished trajectory reads its own prompt followed by
        # the whole shared text, and appends K tokens of its own tokenizer (fewer once L is near;
        # a character the K-th token started is finished: rrdemo.backends.row_decoder).
        chunks = []
        for tr in active:
            agent = agents[tr.order[turn % n]]
            key = (run_id, "RRMaj", question.qid, tr.index, agent.index)
            left = budget - tr.decoded
            prompt = agent.prompt + tr.text
            chunks.append(ChunkRequest(tr.index, agent, prompt, min(k, left), key, room=left))
        results = yield from write_chunks("RRMaj", turn, chunks, config, counter, policy, stop)
        # The chunk joins the shared text; the EOS policy and L say whether the trajectory ends.
        for tr, chunk, out in zip(active, chunks, results, strict=True):
            tr.chunks.append(Chunk(chunk.agent.index, out.text, out.n_tokens))
            tr.n_tokens += out.n_tokens
            tr.decoded += out.decode_tokens
            tr.finish_reason = _end_of_turn(config.eos_policy, tr, out, n, budget)
        yield from after_turn(turn)  # observers read the turn (the truth meter: rrdemo.meter)
    finals = [
        Final(tr.index, tr.text, tr.n_tokens, tr.finish_reason, tr.last_writer) for tr in shared
    ]
    yield from _conclude(
        "RRMaj",
        finals,
        agents,
        task,
        question,
        _target(config, question, target),
        _tie(config, question, "RRMaj"),
    )
    yield counter.event("RRMaj")


def _target(config: RunConfig, question: Question, target: str | None) -> str | None:
    return target if config.strength != "none" else None


def _tie(config: RunConfig, question: Question, method: str) -> int:
    return derive_seed(config.sampling.seed, "tie", method, question.qid)


def _timed(events: Iterator[Event]) -> Iterator[Event]:
    """Pass events through, filling ComputeUsed.wall_s with the time spent producing them."""
    busy = 0.0
    while True:
        start = time.perf_counter()
        try:
            event = next(events)
        except StopIteration:
            return
        busy += time.perf_counter() - start
        if isinstance(event, ComputeUsed):
            event = replace(event, wall_s=round(busy, 4))
        yield event


def _alternate(streams: list[Iterator[Event]]) -> Iterator[Event]:
    """Interleave streams one event at a time, so two methods progress side by side."""
    live = list(streams)
    while live:
        for stream in list(live):
            try:
                yield next(stream)
            except StopIteration:
                live.remove(stream)


def choose_target(task: Task, question: Question, config: RunConfig) -> str | None:
    """The distractor corrupted agents are pushed toward; None when nobody is corrupted."""
    if config.strength == "none" or config.c == 0:
        return None
    return task.distractor(question, config.sampling.seed)


def run_question(
    config: RunConfig,
    question: Question,
    task: Task,
    models: ModelSource,
    *,
    methods: Sequence[Method] = METHODS,
    target: str | None = None,
    interleave: bool = False,
    system: str | None = None,
    maj_samples: int | None = None,
    stop: threading.Event | None = None,
) -> Iterator[Event]:
    """Run MAJ and/or RRMaj on one question with the same agents, target and seed.

    `interleave=True` alternates the two methods' events (the side-by-side demo); otherwise MAJ
    runs to completion first. Closing the generator stops the run and frees its caches; so does
    setting `stop` from another thread (a time limit, a client that left): the engine reads it
    between decoding steps and raises `rrdemo.errors.Stopped`.
    """
    task = task.for_question(question)  # a custom task hands over the one that fits the question
    for spec in config.agents:  # unknown or unloadable models fail before anything else happens
        backend_for(models, spec)
    target = target if target is not None else choose_target(task, question, config)
    shown = task.format_target(target) if target else None
    injection = make_injection(config.strength, shown, config.custom_template) if config.c else None
    injection = get_strategy(config.adversary).wrap_injection(injection)  # e.g. "contextual"
    user_message = styled_prompt(task.prompt(question), config.prompt_style)
    agents = build_agents(config, models, user_message, injection, system)
    run_id = uuid.uuid4().hex[:12]
    streams = []
    for method in methods:
        start = RunStarted(
            method,
            config.to_dict(),
            config.config_hash(),
            question.qid,
            question.text,
            question.gold,
            target,
        )
        observer = observer_for(method, agents, task, question, config, target, run_id)
        hook = observer.after_turn
        if method == "MAJ":
            body = majority_vote(
                agents,
                question,
                task,
                config,
                target,
                samples=maj_samples,
                run_id=run_id,
                after_turn=hook,
                stop=stop,
            )
        elif method == "RRMaj":
            body = round_robin(
                agents, question, task, config, target, run_id=run_id, after_turn=hook, stop=stop
            )
        else:
            raise ValueError(f"unknown method {method!r}")
        streams.append(itertools.chain([start], _timed(observer.watch(body))))
    try:
        if interleave:
            yield from _alternate(streams)
        else:
            for stream in streams:
                yield from stream
    finally:
        for backend in {id(a.backend): a.backend for a in agents}.values():
            backend.release((run_id,))
