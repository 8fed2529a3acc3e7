"""An agent is a model, a role (honest or corrupted) and the prompt that role gives it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from rrdemo.backends.base import Backend
from rrdemo.config import AgentSpec, RunConfig
from rrdemo.corruption import Injection
from rrdemo.errors import RRError


@dataclass(frozen=True)
class Agent:
    index: int  # seat in the ensemble; RR turn t goes to order[t % N]
    spec: AgentSpec
    backend: Backend
    prompt: str  # rendered for its model (chat template or completion format), corruption included

    @property
    def corrupted(self) -> bool:
        return self.spec.corrupted

    @property
    def model(self) -> str:
        return self.backend.name


class ModelSource(Protocol):
    """Where agents get their backends: `rrdemo.backends.pool.ModelPool`, or a test's fake.

    `preferred_backend` is the engine new runs ask for ("auto", "llamacpp", "transformers").
    """

    preferred_backend: str

    def admit(self, name: str) -> None:
        """Raise RRError for a model name this source refuses (the web app's pool takes registry
        names and hub ids only); nothing is loaded."""
        ...

    def get(
        self,
        name: str,
        revision: str | None = None,
        backend: str = "transformers",
        dtype: str | None = None,
    ) -> Backend:
        """The backend of model `name` at `revision` on engine `backend` (transformers weights in
        `dtype`, None: by hardware), loaded on first use."""
        ...

    def ensure(self, specs: Iterable[AgentSpec]) -> Iterator[str]:
        """Load what the agents `specs` need: yields each model's name just before loading it
        (a first load can take a minute), nothing for models already loaded."""
        ...

    def loaded(self) -> list[str]:
        """The names of the models loaded so far."""
        ...

    def sources(self) -> dict[str, str]:
        """Each loaded model and where its weights came from ("shipped file", "hub", ...)."""
        ...

    def offered(self) -> list[str]:
        """The registry models a model list offers (a web app's size cap leaves out the rest)."""
        ...


def backend_for(models: ModelSource, spec: AgentSpec) -> Backend:
    """The backend of the agent `spec`. The engine and dtype are named only when they are not
    the defaults, so every model source with `get(name, revision)` serves default agents."""
    if spec.dtype is not None:
        return models.get(spec.model, spec.revision, backend=spec.backend, dtype=spec.dtype)
    if spec.backend == "transformers":
        return models.get(spec.model, spec.revision)
    return models.get(spec.model, spec.revision, backend=spec.backend)


def build_agents(
    config: RunConfig,
    models: ModelSource,
    user_message: str,
    injection: Injection | None,
    system: str | None = None,
) -> list[Agent]:
    """One agent per seat. Corrupted seats read the injected message, the others the clean one."""
    if not user_message.strip():
        raise RRError("the question is empty; type a question or pick one from a benchmark")
    agents = []
    for index, spec in enumerate(config.agents):
        backend = backend_for(models, spec)
        message = injection.wrap(user_message) if (spec.corrupted and injection) else user_message
        prompt = backend.render_prompt(message, system)
        limit = backend.max_context
        if limit:
            need = backend.count_tokens(prompt) + config.max_tokens
            if need > limit:
                raise RRError(
                    f"the question is too long for {backend.name}: its prompt plus L={config.max_tokens} new "
                    f"tokens needs {need} tokens, the model's context holds {limit}; shorten it or lower L"
                )
        agents.append(Agent(index, spec, backend, prompt))
    return agents
