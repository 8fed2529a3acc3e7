"""Where a served model lives (`Endpoint`) and how its HTTP failures are sorted: worth a retry or not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from rrdemo.errors import RRError


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


class Retryable(Exception):
    """A failure worth another attempt (timeout, 5xx, 429, connection lost)."""


class Fatal(Exception):
    """A failure another attempt would repeat (4xx, malformed answer, model not served)."""


def raise_for_status(response: httpx.Response) -> None:
    """Nothing for a success; `Retryable` for 408, 429 and 5xx; `Fatal` (with a hint) otherwise."""
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
        raise Retryable(message)
    if status == 404:
        message += " (is base_url the server's OpenAI base, usually ending in /v1?)"
    elif status in (401, 403):
        message += " (check the API key variable named by api_key_env)"
    raise Fatal(message)


def listing_problem(response: httpx.Response, served_model: str) -> str | None:
    """What a server's model list (`GET {base_url}/models`, answered 2xx) says against
    `served_model`: None when it lists it, else what it serves."""
    try:
        served = [m.get("id") for m in response.json().get("data", [])]
    except (ValueError, AttributeError):
        return "its model list is not the OpenAI JSON ({'data': [{'id': ...}]})"
    if served_model in served:
        return None
    return (
        f"the server does not serve a model named {served_model!r}; "
        f"it serves: {', '.join(map(str, served)) or 'nothing'}"
    )


def serving_problem(endpoint: Endpoint, headers: Mapping[str, str]) -> str | None:
    """Asked once before a run writes anything: what stops `endpoint` from answering (nothing
    listening at its address, an HTTP error, a model list without its `served_model`), or None.
    A server that lists no models (404) passes: its first completion will tell."""
    try:
        response = httpx.get(
            f"{endpoint.url}/models",
            headers=dict(headers),
            timeout=httpx.Timeout(endpoint.connect_timeout_s),
        )
    except httpx.HTTPError as exc:
        return (
            f"no answer from {endpoint.url} ({exc or 'connection failed'}); is the server "
            "running, and is base_url its address?"
        )
    if response.status_code == 404:
        return None
    try:
        raise_for_status(response)
    except (Retryable, Fatal) as exc:
        return str(exc)
    return listing_problem(response, endpoint.served_model)
