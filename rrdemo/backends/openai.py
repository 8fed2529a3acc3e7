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
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from rrdemo.backends.base import (
    Backend,
    Delta,
    Finished,
    GenerationOutput,
    GenerationRequest,
    keys_with_prefix,
    render_prompt_text,
)
from rrdemo.errors import RRError

log = logging.getLogger(__name__)

PROMPT_FORMATS = ("auto", "chat", "completion")


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach one served model. Holds the *name* of the API-key variable, never the key."""

    # the OpenAI base, e.g. http://127.0.0.1:8000/v1; requests go to {base_url}/completions
    base_url: str
    # the model name the server knows (vLLM --served-model-name, llama.cpp --model_alias)
    served_model: str
    # environment variable holding the API key (read when the backend is built)
    api_key_env: str | None = None
    timeout_s: float = 120.0  # one attempt of one turn, end to end
    connect_timeout_s: float = 10.0
    retries: int = 3  # extra attempts after a timeout, 5xx, 429 or connection error
    backoff_s: float = 1.0  # wait before retry r is backoff_s * 2**r
    concurrency: int = 16  # requests in flight at once per backend
    stream: bool = True  # stream tokens (live deltas); False asks for the whole completion at once
    check_model: bool = True  # verify once via {base_url}/models that served_model is served
    extra_body: Mapping[str, Any] = field(default_factory=dict)  # passed through, e.g. vLLM options

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise RRError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        if not self.served_model:
            raise RRError("a served agent needs the model name its server knows (served_model)")
        if self.timeout_s <= 0 or self.connect_timeout_s <= 0:
            raise RRError("timeouts must be positive numbers of seconds")
        if self.retries < 0 or self.backoff_s < 0:
            raise RRError("retries and backoff_s must not be negative")
        if self.concurrency < 1:
            raise RRError(f"concurrency must be at least 1, got {self.concurrency}")

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/")


class _Retryable(Exception):
    """A failure worth another attempt (timeout, 5xx, 429, connection lost)."""


class _Fatal(Exception):
    """A failure another attempt would repeat (4xx, malformed answer, model not served)."""


def describe_key(key: Hashable) -> str:
    """Human words for a protocol request key: which method, trajectory (or answer) and agent."""
    if isinstance(key, tuple) and len(key) == 5 and key[1] == "RRMaj":
        return f"RRMaj trajectory {key[3]}, agent {key[4]}"
    if isinstance(key, tuple) and len(key) == 4 and key[1] == "MAJ":
        return f"MAJ answer {key[3]}"
    return f"request {key!r}"


def load_tokenizer(source: str):
    """A transformers tokenizer from a registry name (offline models), a local folder or a hub id.

    Offline registry models use the converted copy under the cache when it exists, else the
    tokenizer inside their GGUF file, so serving `smollm2` needs no network.
    """
    from transformers import AutoTokenizer  # noqa: PLC0415 - heavy, only when a prompt is rendered

    from rrdemo import models  # noqa: PLC0415
    from rrdemo.paths import cache_dir  # noqa: PLC0415

    info = models.REGISTRY.get(source)
    try:
        if info is not None and info.offline:
            converted = cache_dir() / "models" / info.name
            if (converted / "tokenizer_config.json").exists():
                return AutoTokenizer.from_pretrained(converted)
            gguf = models._OFFLINE_FILES[info.name]()  # the registry's own locator
            return AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        target = info.hub_id if info is not None and info.hub_id else source
        return AutoTokenizer.from_pretrained(target)
    except (OSError, ValueError, ImportError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RRError(f"could not load the tokenizer {source!r}: {first}") from None


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
        if api_key is None and endpoint.api_key_env:
            api_key = os.environ.get(endpoint.api_key_env)
            if not api_key:
                raise RRError(
                    f"served agent {name!r}: the API key variable {endpoint.api_key_env} is not set"
                )
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
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
            except _Retryable as exc:
                last = str(exc)
            except _Fatal as exc:
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
                _raise_for_status(response)
                served = [m.get("id") for m in response.json().get("data", [])]
                if self.endpoint.served_model not in served:
                    raise _Fatal(
                        f"the server does not serve a model named {self.endpoint.served_model!r}; "
                        f"it serves: {', '.join(map(str, served)) or 'nothing'}"
                    )

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
        _raise_for_status(response)
        try:
            data = response.json()
            choice = data["choices"][0]
            text, reason = choice.get("text") or "", choice.get("finish_reason")
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _Fatal(f"the server's answer is not a completion ({exc!r})") from None
        self._emit(index, text, out, shown)
        return self._finished(index, request, text, reason, data.get("usage"), None)

    async def _streamed(self, client, index, request, out, shown) -> Finished:
        url = f"{self.endpoint.url}/completions"
        text, reason, usage, pieces = "", None, None, 0
        async with client.stream("POST", url, json=self._body(request, True)) as response:
            if response.status_code >= 400:
                await response.aread()
                _raise_for_status(response)
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    break
                try:
                    chunk = json.loads(payload)
                except ValueError:
                    raise _Retryable(f"garbled stream line {payload[:80]!r}") from None
                if chunk.get("error"):
                    raise _Retryable(f"the server reported an error: {chunk['error']}")
                usage = chunk.get("usage") or usage
                for choice in chunk.get("choices") or []:
                    piece = choice.get("text") or ""
                    if piece:
                        text += piece
                        pieces += 1
                        self._emit(index, text, out, shown)
                    reason = choice.get("finish_reason") or reason
        if reason is None:  # e.g. the server interrupted this request for another one
            raise _Retryable("the stream ended before the completion finished")
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


def _raise_for_status(response: httpx.Response) -> None:
    status = response.status_code
    if status < 400:
        return
    try:
        detail = response.json()
        detail = detail.get("error", detail) if isinstance(detail, dict) else detail
        if isinstance(detail, dict):
            detail = detail.get("message", detail)
    except ValueError:
        detail = response.text
    detail = " ".join(str(detail).split())[:300]
    message = f"HTTP {status} from {response.request.url}: {detail}"
    if status in (408, 429) or status >= 500:
        raise _Retryable(message)
    if status == 404:
        message += " (is base_url the server's OpenAI base, usually ending in /v1?)"
    elif status in (401, 403):
        message += " (check the API key variable named by api_key_env)"
    raise _Fatal(message)


# -- a real server on this machine (tests, benchmark, the tested recipe in docs/serving.md) ------
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until_ready(base_url: str, timeout_s: float = 120.0, process=None) -> None:
    """Poll `{base_url}/models` until the server answers; RRError if it dies or takes too long."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RRError(f"the server at {base_url} exited with code {process.returncode}")
        try:
            if httpx.get(f"{base_url.rstrip('/')}/models", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise RRError(f"the server at {base_url} did not answer within {timeout_s:g} s")


@dataclass
class LlamaCppServer:
    """A running `python -m llama_cpp.server` child process; `stop()` (or `with`) ends it."""

    process: subprocess.Popen
    base_url: str
    alias: str
    log_path: Path | None = None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def __enter__(self) -> LlamaCppServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def launch_llama_cpp_server(
    model_path: str | Path,
    *,
    alias: str,
    port: int | None = None,
    n_ctx: int = 2048,
    n_threads: int = 1,
    log_path: Path | None = None,
    ready_timeout_s: float = 120.0,
    extra_args: Sequence[str] = (),
) -> LlamaCppServer:
    """Start llama-cpp-python's OpenAI-compatible server on loopback and wait until it answers.

    `--interrupt_requests False` matters: by default that server cuts a streaming answer short
    whenever another request arrives, and rrdemo sends many requests at once.
    """
    try:
        import llama_cpp.server  # noqa: F401, PLC0415 - only to fail early with a clear message
    except ImportError as exc:
        raise RRError(
            f"llama-cpp-python's server is not installed ({exc}); run scripts/build_llama_cpp_wheel.sh"
        ) from None
    port = port or free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path), "--model_alias", alias,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", str(n_threads),
        "--interrupt_requests", "False",
        *extra_args,
    ]  # fmt: skip
    sink = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
    try:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    finally:
        if log_path:
            sink.close()
    server = LlamaCppServer(process, f"http://127.0.0.1:{port}/v1", alias, log_path)
    try:
        wait_until_ready(server.base_url, ready_timeout_s, process)
    except BaseException:
        server.stop()
        raise
    return server
