"""One turn of writing: each agent whose turn it is adds a chunk, batched per model.

The protocols describe a turn as a list of `ChunkRequest`s (who writes into which trajectory,
reading what, how many tokens). `write_chunks` hands the requests that share a model to its
backend as one batch, turns what the backend streams into `TokenDelta` / `ChunkWritten` events,
and returns each request's `Finished` result. `ComputeCounter` adds up the tokens spent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from threading import Event as StopFlag
from typing import NamedTuple

from rrdemo.agents import Agent
from rrdemo.backends.base import Backend, Delta, Finished, GenerationOutput, GenerationRequest
from rrdemo.config import RunConfig
from rrdemo.errors import RRError, Stopped, check_stop
from rrdemo.events import ChunkWritten, ComputeUsed, Event, Method, TokenDelta
from rrdemo.turns import TurnPolicy
from rrdemo.voting import derive_seed


class ChunkRequest(NamedTuple):
    """One chunk to write: agent `agent` continues `prompt` in trajectory `trajectory`."""

    trajectory: int
    agent: Agent
    prompt: str  # what the agent reads: its own prompt followed by the shared text so far
    max_new_tokens: int  # K for an RR turn (fewer near L), L for a MAJ answer
    key: tuple  # the backend's cache key: (run_id, method, qid, trajectory[, agent])
    # Hard cap: the chunk may pass `max_new_tokens` only to finish a character (RR: what is left
    # of L); None: never past it.
    room: int | None = None


@dataclass
class ComputeCounter:
    """Tokens each agent's model decoded and prefilled for one method."""

    per_agent: dict[int, dict[str, int]] = field(
        default_factory=lambda: defaultdict(lambda: {"decode": 0, "prefill": 0})
    )

    def add(self, agent: int, finished: Finished) -> None:
        self.per_agent[agent]["decode"] += finished.decode_tokens
        self.per_agent[agent]["prefill"] += finished.prefill_tokens

    def event(self, method: Method) -> ComputeUsed:
        return ComputeUsed(
            method=method,
            decode_tokens=sum(v["decode"] for v in self.per_agent.values()),
            prefill_tokens=sum(v["prefill"] for v in self.per_agent.values()),
            wall_s=0.0,  # filled in by the protocols: time spent working, not waiting
            per_agent={str(a): dict(v) for a, v in sorted(self.per_agent.items())},
        )


def write_chunks(
    method: Method,
    turn: int,
    chunks: Sequence[ChunkRequest],
    config: RunConfig,
    counter: ComputeCounter,
    policy: TurnPolicy | None = None,
    stop: StopFlag | None = None,
) -> Iterator[Event]:
    """Let every request in `chunks` write one chunk at `turn`; `policy` (RR) lets a backend end
    a chunk before its count by the run's turn policy. Once the flag `stop` (a
    `threading.Event`) is set, no further decoding step is asked of a backend: `Stopped` is
    raised after the step being read.

    Requests whose agents share a model go to it as one batch. Yields TokenDelta events while
    decoding and one ChunkWritten per request; returns the `Finished` result of each request,
    in input order.
    """
    results: list[Finished | None] = [None] * len(chunks)
    for backend, members in _by_backend(chunks):
        check_stop(stop)
        requests = [_generation_request(chunks[i], turn, config, policy) for i in members]
        outputs = _naming_the_turn(backend.generate(requests), method, turn)
        try:
            for index, out, event in _chunk_events(method, turn, chunks, members, outputs):
                if out is not None:
                    results[index] = out
                    counter.add(chunks[index].agent.index, out)
                yield event
                check_stop(stop)  # between decoding steps (one output is one token or an end)
        finally:
            outputs.close()  # the backend's batch ends here, whatever stopped it
    return results


def _by_backend(chunks: Sequence[ChunkRequest]) -> list[tuple[Backend, list[int]]]:
    """Each backend (one model, one batch) with the indices of the requests it serves."""
    members: dict[int, list[int]] = defaultdict(list)
    for i, chunk in enumerate(chunks):
        members[id(chunk.agent.backend)].append(i)
    return [(chunks[indices[0]].agent.backend, indices) for indices in members.values()]


def _generation_request(
    chunk: ChunkRequest, turn: int, config: RunConfig, policy: TurnPolicy | None
) -> GenerationRequest:
    """What the backend gets for one chunk, seeded by its cache key (without the run id) and turn."""
    return GenerationRequest(
        key=chunk.key,
        prompt=chunk.prompt,
        max_new_tokens=chunk.max_new_tokens,
        sampling=config.sampling,
        seed=derive_seed(config.sampling.seed, *chunk.key[1:], turn),
        room=chunk.room,
        turn=policy,
        group=chunk.key[0],  # the run id
        head=len(chunk.agent.prompt),  # the agent's own prompt leads every chunk's prompt
    )


def _chunk_events(
    method: Method,
    turn: int,
    chunks: Sequence[ChunkRequest],
    members: Sequence[int],
    outputs: Iterator[GenerationOutput],
) -> Iterator[tuple[int, Finished | None, Event]]:
    """(request index, its Finished or None, the event) for each output of one batch."""
    for out in outputs:
        index = members[out.index]
        chunk = chunks[index]
        agent = chunk.agent
        if isinstance(out, Delta):
            event = TokenDelta(
                method, chunk.trajectory, turn, agent.index, agent.corrupted, out.text
            )
            yield index, None, event
            continue
        event = ChunkWritten(
            method,
            chunk.trajectory,
            turn,
            agent.index,
            agent.corrupted,
            agent.model,
            out.text,
            out.n_tokens,
        )
        yield index, out, event


def _naming_the_turn(outputs: Iterator, method: Method, turn: int) -> Iterator:
    """Pass a backend's outputs through; a failure it reports gets the method and turn in front."""
    try:
        yield from outputs
    except Stopped:  # the run was stopped (the memory watchdog): its reason says so as is
        raise
    except RRError as exc:
        raise RRError(f"{method} turn {turn}: {exc}") from None
