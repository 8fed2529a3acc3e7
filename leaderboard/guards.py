"""What slows abuse of the leaderboard's doors: wrong admin tokens and too many submissions.

`TokenGuard` pauses a client that sends wrong admin tokens, `SubmitRate` caps a user's new
submissions an hour, and `check_admin` is the admin check the app and the CLI go through: the
guard around the one rule of who is an admin (`leaderboard.service.check_admin`).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from leaderboard import service
from rrdemo.errors import RRError


@dataclass
class TokenGuard:
    """Slows admin-token guessing, one client at a time: after `limit` wrong tokens from a client
    within `window` seconds, that client's tokens are refused for `pause` seconds; other clients
    (the admins among them) are not held up. Signed-in admins are never paused."""

    limit: int = 5
    window: float = 300.0
    pause: float = 60.0
    failures: dict[str, list[float]] = field(default_factory=dict)  # client -> times
    paused_until: dict[str, float] = field(default_factory=dict)  # client -> end of pause
    lock: Any = field(default_factory=threading.Lock)

    def check(self, client: str = "") -> None:
        """Refuse (RRError) while `client`'s tokens are paused."""
        left = self.paused_until.get(client, 0.0) - time.monotonic()
        if left > 0:
            raise RRError(
                f"Too many wrong admin tokens from you: your tokens are refused for "
                f"{math.ceil(left)} more seconds. Sign in as a listed admin, or try again then."
            )

    def failed(self, client: str = "") -> None:
        """Count one wrong token of `client`; the `limit`-th within `window` starts its pause."""
        now = time.monotonic()
        with self.lock:
            for key, times in list(self.failures.items()):  # forget old failures: bounded
                if not [t for t in times if now - t < self.window]:
                    del self.failures[key]
            for key, until in list(self.paused_until.items()):
                if until <= now:
                    del self.paused_until[key]
            times = [t for t in self.failures.get(client, []) if now - t < self.window] + [now]
            self.failures[client] = times
            if len(times) >= self.limit:
                self.paused_until[client] = now + self.pause
                del self.failures[client]


SUBMISSIONS_ENV = "LEADERBOARD_SUBMISSIONS_PER_HOUR"
DEFAULT_SUBMISSIONS = 10


def submissions_per_hour() -> int:
    """`LEADERBOARD_SUBMISSIONS_PER_HOUR` (default 10), read when called."""
    text = os.environ.get(SUBMISSIONS_ENV, "").strip()
    if not text:
        return DEFAULT_SUBMISSIONS
    if not text.isdigit() or int(text) < 1:
        raise RRError(f"{SUBMISSIONS_ENV} must be a whole number of at least 1, got {text!r}")
    return int(text)


@dataclass
class SubmitRate:
    """At most `per_hour()` new submissions per user (the signed-in login) in any hour."""

    per_hour: Callable[[], int] = submissions_per_hour
    clock: Callable[[], float] = time.monotonic
    sent: dict[str, list[float]] = field(default_factory=dict)  # user -> times
    lock: Any = field(default_factory=threading.Lock)

    def check(self, user: str) -> None:
        """Refuse (RRError) `user`'s next submission when their hour's are spent."""
        limit, now = self.per_hour(), self.clock()
        with self.lock:
            for key, times in list(self.sent.items()):  # forget the past hour: bounded
                self.sent[key] = [t for t in times if now - t < 3600]
                if not self.sent[key]:
                    del self.sent[key]
            times = self.sent.get(user, [])
        if len(times) >= limit:
            wait = math.ceil((3600 - (now - times[0])) / 60)
            raise RRError(
                f"You have sent {len(times)} submissions in the last hour, the most this "
                f"leaderboard takes from one user ({SUBMISSIONS_ENV}); try again in {wait} minutes."
            )

    def sent_one(self, user: str) -> None:
        with self.lock:
            self.sent.setdefault(user, []).append(self.clock())


def check_admin(
    guard: TokenGuard, token: str | None, username: str | None, client: str = ""
) -> None:
    """Allow a signed-in listed admin or the admin token (`service.check_admin`), counting the
    wrong tokens of `client` (who sent them) in `guard`."""
    if not service.is_admin_user(username):
        guard.check(client)
    try:
        service.check_admin(token, username)
    except service.WrongToken:
        guard.failed(client)
        raise
