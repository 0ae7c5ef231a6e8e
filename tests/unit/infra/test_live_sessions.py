"""The live-session lookup when Redis fails (infra/live_sessions.py): checks and revocations
leave a failing Redis alone for a while, revocations that could not be published are published
once it answers, and no instance trusts its cache across a failure or a Redis that lost its data.

Two apps on one database are two instances; they share a Redis stand-in that can be made to fail.
The production tests do the same with real gunicorn instances and a real Redis.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from flask import Flask

from app.domain.services import KEY as SERVICES_KEY
from app.domain.services import services
from app.infra import live_sessions
from tests.support.apps import build_app, dispose_app
from tests.support.http import bearer


class FakeRedis:
    """The few commands the directory uses, in a dict; `failing` makes every call time out."""

    def __init__(self) -> None:
        self.store: dict[str, bytes] = {}
        self.failing = False
        self.calls = 0

    def _call(self) -> None:
        self.calls += 1
        if self.failing:
            raise redis.TimeoutError("Timeout reading from socket")

    def mget(self, *keys: str) -> list[bytes | None]:
        self._call()
        return [self.store.get(key) for key in keys]

    def get(self, key: str) -> bytes | None:
        self._call()
        return self.store.get(key)

    def set(self, key: str, value: Any, ex: int | None = None, nx: bool = False) -> bool:
        self._call()
        if nx and key in self.store:
            return False
        self.store[key] = str(value).encode()
        return True

    def ping(self) -> bool:
        self._call()
        return True

    def pipeline(self, transaction: bool = True) -> FakePipeline:
        return FakePipeline(self)


class FakePipeline:
    def __init__(self, redis_: FakeRedis) -> None:
        self.redis, self.queued = redis_, []  # type: list[tuple[str, Any, int | None]]

    def __enter__(self) -> FakePipeline:
        return self

    def __exit__(self, *_: Any) -> None:
        return None

    def set(self, key: str, value: Any, ex: int | None = None) -> None:
        self.queued.append((key, value, ex))

    def publish(self, channel: str, message: str) -> None:
        # No instance here subscribes (that needs a real Redis: tests/system/production).
        return None

    def execute(self) -> list[bool]:
        self.redis._call()
        for key, value, _ in self.queued:
            self.redis.store[key] = str(value).encode()
        return [True] * len(self.queued)


@pytest.fixture
def shared_redis() -> FakeRedis:
    return FakeRedis()


BACKGROUND_REPUBLISHER = live_sessions.LiveSessions._start_republisher


@pytest.fixture(autouse=True)
def short_rests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(live_sessions, "REDIS_REST_SECONDS", 0.3)
    # Only the test of the background retry has one: the others show what requests do alone.
    monkeypatch.setattr(live_sessions.LiveSessions, "_start_republisher", lambda self: None)


@pytest.fixture
def a(app: Flask, shared_redis: FakeRedis) -> Flask:
    with app.app_context():
        services().live_sessions.redis = shared_redis
    return app


@pytest.fixture
def b(tmp_path: Any, clock: Any, settings: dict[str, Any], database_url: str,
      shared_redis: FakeRedis, a: Flask) -> Iterator[Flask]:
    other = build_app(tmp_path / "instance", clock, settings, database_url)  # same keys
    with other.app_context():
        services().live_sessions.redis = shared_redis
    yield other
    dispose_app(other)


def verify(app: Flask, token: str) -> int:
    return app.test_client().get("/api/v2/auth/verify", headers=bearer(token)).status_code


def logout(app: Flask, token: str) -> int:
    return app.test_client().post("/api/v2/auth/logout", headers=bearer(token)).status_code


# A logout whose revocation Redis did not take (it is committed, and kept to publish): a 503,
# never a success, while another instance may still answer from its copy.
UNSHARED = 503


def wait_rest_out() -> None:
    time.sleep(live_sessions.REDIS_REST_SECONDS + 0.05)


def test_a_failing_redis_costs_logouts_one_attempt_per_rest(a, user, login, shared_redis,
                                                            monkeypatch):
    # The shipped rest, not the fixture's short one: five logouts on a slow machine (one took
    # 0.8 s on PostgreSQL in CI) must all fall inside it, or the count below measures the machine.
    monkeypatch.setattr(live_sessions, "REDIS_REST_SECONDS", 5)
    sessions = [login(user)["access_token"] for _ in range(5)]
    shared_redis.failing = True
    before = shared_redis.calls
    # Committed but not shared: no success answered (UNSHARED), and no Redis call but the first.
    assert [logout(a, token) for token in sessions] == [UNSHARED] * 5
    assert shared_redis.calls - before == 1  # the first logout tried, the others waited
    assert [verify(a, token) for token in sessions] == [401] * 5  # the database refuses them


def test_revocations_kept_through_a_failure_are_published_before_the_next_check(
        a, b, user, login, shared_redis):
    tokens = [login(user)["access_token"] for _ in range(3)]
    assert [verify(b, token) for token in tokens] == [200] * 3  # B's cache is warm
    shared_redis.failing = True
    assert [logout(a, token) for token in tokens] == [UNSHARED] * 3
    assert not any(key.startswith("svc-auth:revoked:") for key in shared_redis.store)
    shared_redis.failing = False
    wait_rest_out()
    # A publishes what it kept before it trusts Redis again; B, which never saw the failure,
    # then finds the sessions revoked in Redis.
    assert verify(a, login(user)["access_token"]) == 200
    assert sum(key.startswith("svc-auth:revoked:") for key in shared_redis.store) == 3
    assert [verify(b, token) for token in tokens] == [401] * 3


def test_kept_revocations_are_published_in_the_background_once_redis_answers(
        a, b, user, login, shared_redis, monkeypatch):
    monkeypatch.setattr(live_sessions, "REPUBLISH_SECONDS", 0.05)
    monkeypatch.setattr(live_sessions.LiveSessions, "_start_republisher", BACKGROUND_REPUBLISHER)
    token = login(user)["access_token"]
    assert verify(b, token) == 200
    shared_redis.failing = True
    assert logout(a, token) == UNSHARED
    time.sleep(0.2)  # retries that fail, in the background
    shared_redis.failing = False
    deadline = time.monotonic() + 5
    while not any(key.startswith("svc-auth:revoked:") for key in shared_redis.store):
        assert time.monotonic() < deadline, "the kept revocation was never published"
        time.sleep(0.02)
    assert verify(b, token) == 401  # with no request on A since


def test_an_instance_that_saw_redis_fail_does_not_trust_its_cache_after(
        a, b, user, login, shared_redis):
    token = login(user)["access_token"]
    assert verify(b, token) == 200  # cached on B
    shared_redis.failing = True
    assert verify(b, token) == 200  # B finds Redis failing: the database answers
    assert logout(a, token) == UNSHARED  # A cannot publish (nor tries again for a while)
    shared_redis.failing = False
    wait_rest_out()
    a_directory = a.extensions[SERVICES_KEY].live_sessions
    a_directory._unpublished.clear()  # say A's memory is lost: B must still refuse
    assert verify(b, token) == 401


def test_nothing_read_while_redis_fails_is_cached(a, b, user, login, shared_redis):
    token = login(user)["access_token"]
    shared_redis.failing = True
    assert verify(b, token) == 200  # read from the database, not cached
    shared_redis.failing = False
    wait_rest_out()
    with a.app_context():
        a.extensions[SERVICES_KEY].live_sessions.redis = FakeRedis()  # A cut off from B's Redis
        a.extensions[SERVICES_KEY].live_sessions.redis.failing = True
    assert logout(a, token) == UNSHARED
    assert verify(b, token) == 401


def test_a_redis_that_lost_its_data_voids_every_cache(a, b, user, login, shared_redis):
    token = login(user)["access_token"]
    assert verify(b, token) == 200  # cached on B
    assert logout(a, token) == 204  # published
    shared_redis.store.clear()  # Redis restarted empty: the revocation is gone from it
    assert verify(b, token) == 401  # B's cache is dropped: the database refuses it
