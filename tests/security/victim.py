"""The second client of every attack test: another visitor (another address behind the Space's
proxy) reads the Theory tab while the attack runs, and must be answered within `ANSWER_S`."""

from __future__ import annotations

import time

from tests.support.served import HTTP_TIMEOUT_S

ANSWER_S = 15.0  # a theory read answers in well under a second on an idle machine; this bound
# leaves room for the shared 2-core machine, and is far below the probes' 55-108 s freezes
THEORY = [0.03, 0.4, 100, 1000]


def theory_read(url: str, address: str = "10.77.0.1") -> float:
    """Seconds one raw theory read (post, then its stream) took, from `address`; fails unless
    the read was answered with its text."""
    import httpx

    headers = {"X-Forwarded-For": address}
    started = time.monotonic()
    posted = httpx.post(
        f"{url}gradio_api/call/theory",
        json={"data": THEORY},
        headers=headers,
        timeout=HTTP_TIMEOUT_S,
    )
    assert posted.status_code == 200, posted.text
    event = posted.json()["event_id"]
    text = httpx.get(
        f"{url}gradio_api/call/theory/{event}", headers=headers, timeout=HTTP_TIMEOUT_S
    ).text
    assert "event: complete" in text and "66.0%" in text, text[:300]
    return time.monotonic() - started


def answered_meanwhile(url: str) -> float:
    """`theory_read` from the victim's address, asserted within `ANSWER_S`; returns its time."""
    took = theory_read(url)
    assert took < ANSWER_S, f"another visitor waited {took:.1f} s during the attack"
    return took
