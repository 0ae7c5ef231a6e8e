"""Bursts of guesses against the throttles: many requests at once, each on a test client (and a
database connection) of its own, with the check of the guess held until every request of the
burst has either reached it or been answered without it.

Held so, a throttle that reads its count and adds to it later (after the guess) lets the whole
burst through: no request's failure is counted before every request has read the count. One
that counts first lets exactly its limit through. A request that waits for a lock the held
ones have (SQLite's one writer, a counter's row on PostgreSQL) reaches neither point: after
PATIENCE seconds the held ones go on, so a throttle that serialises costs time, not a hang.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import Any

import pytest

from tests.support.api import all_at_once

BURST = 16
PATIENCE = 0.3  # seconds a held check waits for the rest of the burst


class Burst:
    """Counts the checks of a guess that a burst of requests reached (`checked`)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.checked = 0
        self._passed_by = 0
        self._condition = threading.Condition()
        self._reached = threading.local()

    def hold(self, check: Callable[..., Any]) -> Callable[..., Any]:
        """`check`, counted, and held until every request reached a check or was answered."""
        @wraps(check)
        def held(*args: Any, **kwargs: Any) -> Any:
            self._reached.done = True
            with self._condition:
                self.checked += 1
                self._condition.notify_all()
                self._condition.wait_for(
                    lambda: self.checked + self._passed_by >= self.size, timeout=PATIENCE)
            return check(*args, **kwargs)
        return held

    def send(self, request: Callable[[int], Any]) -> list[Any]:
        """Run `request(i)` for every i of the burst at once; the answers, in order of i."""
        def one(index: int) -> Any:
            self._reached.done = False
            try:
                return request(index)
            finally:
                if not self._reached.done:  # answered without checking a guess
                    with self._condition:
                        self._passed_by += 1
                        self._condition.notify_all()
        return all_at_once(self.size, one)


@contextmanager
def burst(monkeypatch: pytest.MonkeyPatch, target: Any, name: str,
          size: int = BURST) -> Iterator[Burst]:
    """A burst whose check of a guess is `target.name` (a module's function, a class's
    method)."""
    found = Burst(size)
    monkeypatch.setattr(target, name, found.hold(getattr(target, name)))
    yield found


def statuses(responses: list[Any]) -> list[int]:
    return sorted(response.status_code for response in responses)


def browser_like(client: Any, app: Any) -> Any:
    """A new test client of `app` with `client`'s cookies (the same browser, another tab)."""
    copy = app.test_client()
    for cookie in client._cookies.values():  # noqa: SLF001 (werkzeug keeps no public list)
        copy.set_cookie(cookie.key, cookie.value, domain=cookie.domain, path=cookie.path)
    return copy


# Settings for an app under a burst: a connection for every request of it, and some to spare.
POOL = {"SQLALCHEMY_ENGINE_OPTIONS": {"pool_size": BURST + 4, "pool_pre_ping": True}}
