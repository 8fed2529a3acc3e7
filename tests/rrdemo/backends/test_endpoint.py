"""Where a served model lives, and how an HTTP answer is sorted: fine, worth a retry, or fatal."""

from __future__ import annotations

import httpx
import pytest

from rrdemo.backends.endpoint import Endpoint, Fatal, Retryable, raise_for_status
from rrdemo.errors import RRError

URL = "http://127.0.0.1:8000/v1/completions"


def _answer(status: int, **content) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", URL), **content)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"base_url": "127.0.0.1:8000/v1"}, "must start with http"),
        ({"served_model": ""}, "served_model"),
        ({"timeout_s": 0}, "timeouts must be positive"),
        ({"connect_timeout_s": -1}, "timeouts must be positive"),
        ({"retries": -1}, "must not be negative"),
        ({"backoff_s": -0.5}, "must not be negative"),
        ({"concurrency": 0}, "concurrency must be at least 1"),
    ],
)
def test_bad_settings_are_refused_saying_what_is_allowed(settings, message):
    fields = {"base_url": "http://127.0.0.1:8000/v1", "served_model": "m", **settings}
    with pytest.raises(RRError, match=message):
        Endpoint(**fields)


def test_the_url_drops_trailing_slashes_and_holds_no_key():
    endpoint = Endpoint("https://host.example/v1/", "m", api_key_env="MY_KEY")
    assert endpoint.url == "https://host.example/v1"
    assert "MY_KEY" in repr(endpoint)  # the variable's name; the key itself is never held


@pytest.mark.parametrize("status", [200, 201, 204, 302])
def test_successes_pass(status):
    raise_for_status(_answer(status))


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_timeouts_rate_limits_and_server_errors_are_worth_a_retry(status):
    with pytest.raises(Retryable, match=f"HTTP {status} from {URL}"):
        raise_for_status(_answer(status, json={"error": {"message": "try later"}}))


@pytest.mark.parametrize(
    ("status", "hint"),
    [(404, "ending in /v1"), (401, "api_key_env"), (403, "api_key_env"), (400, None)],
)
def test_client_errors_are_fatal_with_a_hint(status, hint):
    with pytest.raises(Fatal) as fatal:
        raise_for_status(_answer(status, json={"error": {"message": "no such thing"}}))
    message = str(fatal.value)
    assert message.startswith(f"HTTP {status} from {URL}: no such thing")
    assert (hint in message) if hint else "(" not in message


def test_the_servers_detail_is_shown_short_on_one_line():
    with pytest.raises(Fatal) as plain:
        raise_for_status(_answer(400, text="line one\n   line two " + "x" * 1000))
    detail = str(plain.value).split(": ", 1)[1]
    assert detail.startswith("line one line two x") and len(detail) == 300
    with pytest.raises(Fatal, match="{'why': 'bad'}"):
        raise_for_status(_answer(422, json={"error": {"why": "bad"}}))  # no message: the object
