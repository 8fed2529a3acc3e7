"""The third probe's LOW items, against the real app on a real port: each gets a clear message,
never `{"error": null}` or a bare 500. An unknown `fn_index`; a lone surrogate in a submission's
notes or provenance; impossible submissions (dated 0001-01-01 or in the future, a perfect score
on one question with the interval [1, 1]); a preview of NaN or infinity; identical uploads,
whose clean-up must not delete each other's file; an oversized prompt sized from its parts."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.security.victim import answered_meanwhile
from tests.support.fakes import fake_pool
from tests.support.samples import result_row, submission
from tests.support.served import HTTP_TIMEOUT_S, ServedApp, app_client, serve_app
from ui.state import ARENA_FIELDS, ArenaRequest
from ui.uploads import discard


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[ServedApp]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RRDEMO_PROXY_HOPS", "1")
        yield from serve_app(fake_pool(), tmp_path_factory.mktemp("low"))


def _join(served: ServedApp, body: dict, route: str = "queue/join"):
    import httpx

    return httpx.post(
        f"{served.url}gradio_api/{route}",
        content=json.dumps(body),  # NaN and infinity as Python writes them, as a raw client can
        headers={"content-type": "application/json", "X-Forwarded-For": "10.80.0.1"},
        timeout=HTTP_TIMEOUT_S,
    )


def test_an_unknown_fn_index_is_a_4xx_with_a_message(served: ServedApp) -> None:
    for route in ("queue/join", "run/predict"):
        body = {"data": [], "fn_index": 9999, "session_hash": uuid.uuid4().hex}
        reply = _join(served, body, route)
        assert reply.status_code == 404, (route, reply.text)
        assert "no such endpoint" in reply.json()["detail"]
    reply = _join(served, {"data": [1]}, "call/no-such-api")
    assert reply.status_code == 404 and "no such endpoint" in reply.json()["detail"]
    answered_meanwhile(served.url)


def test_a_preview_of_nan_or_infinity_names_the_value(served: ServedApp) -> None:
    preview = next(
        i
        for i, fn in served.demo.fns.items()
        if [getattr(b, "label", None) for b in fn.inputs][1:2] == ["Question #"] and not fn.queue
    )
    for value, shown in ((float("nan"), "nan"), (float("inf"), "inf")):
        body = {"data": ["logic3", value, "", ""], "fn_index": preview, "session_hash": "s"}
        reply = _join(served, body)
        assert reply.status_code == 422 and '"error": null' not in reply.text
        assert f"Question # must be a whole number, got {shown}." in reply.text


def _submit(served: ServedApp, tmp_path: Path, doc_text: str) -> str:
    from gradio_client import handle_file

    path = tmp_path / f"{uuid.uuid4().hex}.json"
    path.write_text(doc_text)
    client = app_client(served.url, download_files=False)
    return client.predict(handle_file(str(path)), api_name="/leaderboard_submit")


def test_impossible_submissions_are_refused_with_reasons(served: ServedApp, tmp_path) -> None:
    surrogate = json.dumps(submission(notes="x")).replace('"x"', '"\\ud800"')
    assert "notes holds a character that is not text (a lone surrogate)" in (
        _submit(served, tmp_path, surrogate)
    )
    doc = submission(provenance="x")
    assert "provenance holds a character that is not text" in _submit(
        served, tmp_path, json.dumps(doc).replace('"x"', '"\\udfff"')
    )
    old = _submit(served, tmp_path, json.dumps(submission(created="0001-01-01T00:00:00+00:00")))
    assert "is before 2025-01-01" in old
    future = _submit(served, tmp_path, json.dumps(submission(created="2999-01-01T00:00:00Z")))
    assert "lies in the future" in future
    perfect = result_row(
        n_questions=1, maj_accuracy=1.0, rrmaj_accuracy=1.0, maj_ci=[1.0, 1.0], rrmaj_ci=[1.0, 1.0]
    )
    one = _submit(served, tmp_path, json.dumps(submission([perfect])))
    assert "maj_ci [1.0, 1.0] is narrower than 1 questions allow" in one
    for reply in (old, future, one):
        assert reply.startswith("Rejected") and '"error": null' not in reply
    # a real run's interval at a perfect score on one question (Wilson's) passes
    fine = result_row(n_questions=1, maj_accuracy=1.0, rrmaj_accuracy=1.0, maj_ci=[0.21, 1.0])
    assert "Rejected" not in _submit(served, tmp_path, json.dumps(submission([fine])))


def test_identical_uploads_have_paths_of_their_own(served: ServedApp) -> None:
    import httpx

    def upload() -> str:
        files = [("files", ("same.json", b'{"same": "bytes"}', "application/json"))]
        posted = httpx.post(f"{served.url}gradio_api/upload", files=files, timeout=HTTP_TIMEOUT_S)
        assert posted.status_code == 200, posted.text
        return posted.json()[0]

    first, second = upload(), upload()
    assert first != second and Path(first).name == Path(second).name == "same.json"
    discard(first)  # the first submitter's callback cleans up
    assert not Path(first).exists() and Path(second).read_bytes() == b'{"same": "bytes"}'


def test_a_prompt_is_sized_from_its_parts_before_any_tokenization(served: ServedApp) -> None:
    """The probe: a MATH-500 target of 19,990 digits in the 250 `{target}` slots of a custom
    template, a 5M-token prompt tokenized before its refusal (4.7 s of CPU, +1 GB). A target that
    long is now refused by the answer guard first, so this one stays under the guard (900 digits)
    and only its 250 copies pass the prompt's size."""
    from gradio_client.exceptions import AppError

    request = ArenaRequest(
        model="obey", n=3, c=1, k=8, m=0, max_tokens=16, task="math500", question_index=0,
        strength="custom", custom_template="{target}" * 250, target="9" * 900,
    )  # fmt: skip
    client = app_client(served.url, download_files=False)
    before = len(served.pool.backends["obey"].calls)
    with pytest.raises(AppError) as refused:
        client.predict(*[getattr(request, n) for n in ARENA_FIELDS], api_name="/run")
    assert "injection's length with its target in its 250 slot(s)" in str(refused.value)
    assert "at most 20000 is allowed (RRDEMO_MAX_QUESTION_CHARS)" in str(refused.value)
    assert len(served.pool.backends["obey"].calls) == before  # no model was asked anything
    small = replace(request, custom_template="Pick {target}.", target="42")
    assert client.predict(*[getattr(small, n) for n in ARENA_FIELDS], api_name="/run")
    answered_meanwhile(served.url)
