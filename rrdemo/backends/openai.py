"""Agents served by an OpenAI-compatible inference server (vLLM, TGI, llama.cpp's server).

The protocols hand a backend each agent's full text (its rendered prompt followed by the shared
trajectory) and ask for K more tokens. `OpenAIBackend` sends that text to the server's
`/v1/completions` with `max_tokens = K`, so the chat template is applied here, from the model's
tokenizer when one is available (else the plain completion format below), and the server only
continues text. Token counts come from the server's `usage`.

All requests of one `generate` call are in flight together (asyncio + httpx on a worker thread,
bounded by `Endpoint.concurrency`), so the server's continuous batching and prefix caching do the
work. A request that times out, hits a 5xx/429 or loses its connection is retried with exponential
backoff; when it finally fails, `generate` raises `RRError` naming the agent, its endpoint and the
turn, and cancels the other requests, so a run never hangs on a dead server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import queue
import threading
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any

import httpx

from rrdemo.backends.base import (
    Backend,
    Delta,
    Finished,
    GenerationOutput,
    GenerationRequest,
    describe_key,
    keys_with_prefix,
    render_prompt_text,
)
from rrdemo.backends.endpoint import (
    Endpoint,
    Fatal,
    Retryable,
    listing_problem,
    raise_for_status,
    serving_problem,
)
from rrdemo.backends.loading import load_tokenizer
from rrdemo.errors import RRError

log = logging.getLogger(__name__)

PROMPT_FORMATS = ("auto", "chat", "completion")


class OpenAIBackend(Backend):
    """A model behind an OpenAI-compatible `/v1/completions` endpoint.

    `name` is what agents and events call the model (`AgentSpec.model`); `endpoint.served_model`
    is what the server calls it. `tokenizer` (a loaded tokenizer, or a registry name / folder / hub
    id loaded on first use) renders chat prompts; `prompt_format` "auto" uses its chat template when
    it has one, "completion" always uses `COMPLETION_FORMAT`.
    """

    def __init__(
        self,
        name: str,
        endpoint: Endpoint,
        *,
        tokenizer: Any = None,
        prompt_format: str = "auto",
        max_context: int | None = None,
        api_key: str | None = None,
    ) -> None:
        if prompt_format not in PROMPT_FORMATS:
            raise RRError(
                f"prompt_format must be one of {', '.join(PROMPT_FORMATS)}, got {prompt_format!r}"
            )
        if prompt_format == "chat" and tokenizer is None:
            raise RRError(f"{name}: prompt_format 'chat' needs a tokenizer with a chat template")
        self.name = name
        self.revision = None
        self.endpoint = endpoint
        self.prompt_format = prompt_format
        self.max_context = max_context
        # The key is read when a request is about to be sent (`_auth`), not here: a dry run plans
        # a served sweep before the key exists.
        self._api_key = api_key
        self._headers: dict[str, str] = {}
        self._tokenizer_source = tokenizer if isinstance(tokenizer, str) else None
        self._tokenizer = None if isinstance(tokenizer, str) else tokenizer
        self._lock = threading.Lock()
        self._turns: dict[Hashable, int] = {}  # requests sent per key, to name the failing turn
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: httpx.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._checked: asyncio.Lock | None = None
        self._model_ok = not endpoint.check_model

    def __repr__(self) -> str:  # never shows the key
        return (
            f"OpenAIBackend({self.name!r}, {self.endpoint.served_model!r} at {self.endpoint.url})"
        )

    # -- prompts and tokens ----------------------------------------------------------------------
    @property
    def tokenizer(self):
        with self._lock:
            if self._tokenizer is None and self._tokenizer_source:
                self._tokenizer = load_tokenizer(self._tokenizer_source)
            return self._tokenizer

    @property
    def uses_chat_template(self) -> bool:
        if self.prompt_format == "completion":
            return False
        tok = self.tokenizer
        has = bool(tok is not None and getattr(tok, "chat_template", None))
        if self.prompt_format == "chat" and not has:
            raise RRError(f"{self.name}: its tokenizer has no chat template")
        return has

    def render_prompt(self, user: str, system: str | None = None) -> str:
        return render_prompt_text(self.tokenizer if self.uses_chat_template else None, user, system)

    def count_tokens(self, text: str) -> int:
        tok = self.tokenizer
        if tok is None:
            raise RRError(
                f"{self.name}: counting tokens needs a tokenizer; set `tokenizer` in the ensemble file"
            )
        return len(tok(text, add_special_tokens=False)["input_ids"])

    def missing_key(self) -> str | None:
        """What keeps a request from being sent for want of an API key (the variable named by
        `api_key_env` unset or empty), or None."""
        env = self.endpoint.api_key_env
        if self._api_key is None and env and not os.environ.get(env):
            return f"served agent {self.name!r}: the API key variable {env} is not set"
        return None

    def _auth(self) -> dict[str, str]:
        """The request headers, the key read now from its variable; RRError when it is unset."""
        problem = self.missing_key()
        if problem:
            raise RRError(problem)
        env = self.endpoint.api_key_env
        key = self._api_key if self._api_key is not None else os.environ.get(env) if env else None
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        return self._headers

    def check_serving(self) -> None:
        """RRError unless the server answers and serves this model: one quick request, asked
        before a run loads or writes anything (a dead port or a wrong served_model fails now)."""
        problem = serving_problem(self.endpoint, self._auth())
        if problem:
            raise RRError(f"{self._where()}: {problem}")
        self._model_ok = True  # the first turn need not ask again

    def release(self, key_prefix: tuple = ()) -> None:
        """The server keeps the caches; only the per-key turn counters are dropped here."""
        with self._lock:
            for key in keys_with_prefix(list(self._turns), key_prefix):
                del self._turns[key]

    def close(self) -> None:
        """Stop the worker thread and its HTTP client (a later `generate` starts them again)."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None:
            return
        client = self._client
        if client is not None:
            asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(timeout=5)
        self._client = self._semaphore = self._checked = None
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=5)

    # -- generation ------------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerationRequest]) -> Iterator[GenerationOutput]:
        requests = list(requests)
        if not requests:
            return
        for request in requests:
            if request.turn is not None and request.turn.adaptive:
                raise RRError(
                    f"{self.name}: a served model cannot use the turn policy "
                    f"{request.turn.kind!r} (the server does not show each token's entropy or "
                    "let the client stop at a sentence end); use the turn policy 'fixed'"
                )
        if self._client is None:  # the key is read as the first requests are about to go
            self._auth()
        turns = []
        with self._lock:
            for request in requests:
                self._turns[request.key] = self._turns.get(request.key, 0) + 1
                turns.append(self._turns[request.key])
        out: queue.Queue = queue.Queue()
        future = asyncio.run_coroutine_threadsafe(
            self._run_all(requests, turns, out), self._ensure_loop()
        )
        finished = 0
        try:
            while finished < len(requests):
                try:
                    item = out.get(timeout=0.1)
                except queue.Empty:
                    if future.done() and out.empty():
                        future.result()  # raises the RRError of a failed request
                        raise RuntimeError("served generation ended without all results") from None
                    continue
                if isinstance(item, Finished):
                    finished += 1
                yield item
        finally:
            if not future.done():  # the consumer stopped early, or a request failed
                future.cancel()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name=f"openai-backend-{self.name}", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _async_state(self) -> httpx.AsyncClient:
        """The client, semaphore and lock, created inside the worker loop on first use."""
        if self._client is None:
            ep = self.endpoint
            self._client = httpx.AsyncClient(
                headers=self._headers,
                timeout=httpx.Timeout(ep.timeout_s, connect=ep.connect_timeout_s),
                limits=httpx.Limits(max_connections=ep.concurrency + 2),
            )
            self._semaphore = asyncio.Semaphore(ep.concurrency)
            self._checked = asyncio.Lock()
        return self._client

    async def _run_all(
        self, requests: list[GenerationRequest], turns: list[int], out: queue.Queue
    ) -> None:
        client = self._async_state()
        await self._check_model(client, requests[0].key)
        tasks = [
            asyncio.ensure_future(self._one(client, i, r, turn, out))
            for i, (r, turn) in enumerate(zip(requests, turns, strict=True))
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def _where(self) -> str:
        return f"served agent model {self.name!r} ({self.endpoint.served_model!r} at {self.endpoint.url})"

    async def _retrying(self, what: str, attempt_fn) -> Any:
        """Run `attempt_fn()` with the endpoint's timeout, retrying retryable failures with backoff."""
        ep = self.endpoint
        last = "no attempt made"
        for attempt in range(ep.retries + 1):
            if attempt:
                await asyncio.sleep(ep.backoff_s * 2 ** (attempt - 1))
            try:
                return await asyncio.wait_for(attempt_fn(), timeout=ep.timeout_s)
            except asyncio.TimeoutError:
                last = f"no answer within the {ep.timeout_s:g} s timeout"
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                last = f"{type(exc).__name__}: {exc or 'connection failed'}"
            except Retryable as exc:
                last = str(exc)
            except Fatal as exc:
                raise RRError(f"{self._where()} failed on {what}: {exc}") from None
            log.warning("%s: attempt %d on %s failed: %s", self._where(), attempt + 1, what, last)
        raise RRError(f"{self._where()} failed on {what} after {ep.retries + 1} attempt(s): {last}")

    async def _check_model(self, client: httpx.AsyncClient, key: Hashable) -> None:
        if self._model_ok:
            return
        async with self._checked:
            if self._model_ok:
                return

            async def attempt() -> None:
                response = await client.get(f"{self.endpoint.url}/models")
                if response.status_code == 404:
                    return  # no model listing here: the completion request will tell
                raise_for_status(response)
                problem = listing_problem(response, self.endpoint.served_model)
                if problem:
                    raise Fatal(problem)

            await self._retrying(f"checking the model list before {describe_key(key)}", attempt)
            self._model_ok = True

    async def _one(
        self,
        client: httpx.AsyncClient,
        index: int,
        request: GenerationRequest,
        turn: int,
        out: queue.Queue,
    ) -> None:
        shown = [""]  # text already streamed as deltas, kept across retries

        async def attempt() -> Finished:
            if self.endpoint.stream:
                return await self._streamed(client, index, request, out, shown)
            return await self._whole(client, index, request, out, shown)

        what = f"{describe_key(request.key)}, its turn {turn} [key {request.key!r}]"
        async with self._semaphore:
            finished = await self._retrying(what, attempt)
        out.put(finished)

    def _body(self, request: GenerationRequest, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.endpoint.served_model,
            "prompt": request.prompt,
            "max_tokens": request.max_new_tokens,
            "temperature": request.sampling.temperature,
            "top_p": request.sampling.top_p,
            "seed": request.seed % 2**31,  # servers take 32-bit seeds
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        body.update(self.endpoint.extra_body)
        return body

    async def _whole(self, client, index, request, out, shown) -> Finished:
        response = await client.post(
            f"{self.endpoint.url}/completions", json=self._body(request, False)
        )
        raise_for_status(response)
        try:
            data = response.json()
            choice = data["choices"][0]
            text, reason = choice.get("text") or "", choice.get("finish_reason")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise Fatal(f"the server's answer is not a completion ({exc!r})") from None
        self._emit(index, text, out, shown)
        return self._finished(index, request, text, reason, data.get("usage"), None)

    async def _streamed(self, client, index, request, out, shown) -> Finished:
        url = f"{self.endpoint.url}/completions"
        text, reason, usage, pieces = "", None, None, 0
        async with client.stream("POST", url, json=self._body(request, True)) as response:
            if response.status_code >= 400:
                await response.aread()
                raise_for_status(response)
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    break
                try:
                    chunk = json.loads(payload)
                except ValueError:
                    raise Retryable(f"garbled stream line {payload[:80]!r}") from None
                if chunk.get("error"):
                    raise Retryable(f"the server reported an error: {chunk['error']}")
                usage = chunk.get("usage") or usage
                for choice in chunk.get("choices") or []:
                    piece = choice.get("text") or ""
                    if piece:
                        text += piece
                        pieces += 1
                        self._emit(index, text, out, shown)
                    reason = choice.get("finish_reason") or reason
        if reason is None:  # e.g. the server interrupted this request for another one
            raise Retryable("the stream ended before the completion finished")
        return self._finished(index, request, text, reason, usage, pieces)

    @staticmethod
    def _emit(index: int, text: str, out: queue.Queue, shown: list[str]) -> None:
        """Stream the part of `text` not shown yet (a retry re-shows nothing it already showed)."""
        if len(text) > len(shown[0]) and text.startswith(shown[0]):
            out.put(Delta(index, text[len(shown[0]) :]))
            shown[0] = text

    def _finished(
        self,
        index: int,
        request: GenerationRequest,
        text: str,
        reason: str | None,
        usage: Mapping | None,
        pieces: int | None,
    ) -> Finished:
        finish = "eos" if reason == "stop" else "length"
        usage = usage or {}
        n_tokens = usage.get("completion_tokens")
        if n_tokens is None:  # a stream without usage: the length is known when it hit max_tokens
            if finish == "length":
                n_tokens = request.max_new_tokens
            else:
                n_tokens = self._count_or(text, pieces or 0)
        prompt_tokens = usage.get("prompt_tokens")
        if prompt_tokens is None:
            prompt_tokens = self._count_or(request.prompt, 0)
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return Finished(
            index=index,
            text=text,
            n_tokens=int(n_tokens),
            finish_reason=finish,
            prefill_tokens=max(int(prompt_tokens) - int(cached), 0),
            decode_tokens=int(n_tokens),
        )

    def _count_or(self, text: str, fallback: int) -> int:
        try:
            return self.count_tokens(text) if self.tokenizer is not None else fallback
        except RRError:
            return fallback
