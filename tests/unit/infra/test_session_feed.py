"""A worker's subscription (app/infra/session_feed.py) on a real Redis: what is published reaches
the worker at its next check, the copy is trusted only while Redis has answered a PING within the
lease, and a subscription that fails says so instead of going quiet."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from app.infra import session_feed
from app.infra.session_feed import CHANNEL, FeedBroken, SessionFeed

if TYPE_CHECKING:
    from tests.support.redis import RedisServer


@pytest.fixture
def received() -> list[tuple[str, list[str]]]:
    return []


@pytest.fixture
def feed(redis_server: RedisServer, received: list[tuple[str, list[str]]]
         ) -> Iterator[SessionFeed]:
    subscription = SessionFeed(redis_server.url, lambda kind, ids: received.append((kind, ids)),
                               timeout=0.5)
    subscription.subscribe()
    yield subscription
    subscription.close()


def publish(redis_server: RedisServer, message: str) -> None:
    with redis_server.client() as client:
        client.publish(CHANNEL, message)
        client.ping()  # as the service does: the message is in the subscriber's socket now


def test_what_is_published_is_read_at_the_next_check(feed, redis_server, received):
    assert feed.current()  # just subscribed: nothing published before could matter
    publish(redis_server, "r session-1 session-2")
    publish(redis_server, "a user-1")
    assert received == []  # read by the worker itself, at its checks: no thread
    assert feed.current()
    assert received == [("r", ["session-1", "session-2"]), ("a", ["user-1"])]


def test_the_copy_is_trusted_only_within_the_lease(feed, monkeypatch):
    monkeypatch.setattr(session_feed, "LEASE_SECONDS", 0.2)
    assert feed.current()
    time.sleep(0.25)
    assert not feed.current()  # Redis has not answered for longer than the lease; a PING goes
    deadline = time.monotonic() + 5
    while not feed.current():  # its answer renews the lease
        assert time.monotonic() < deadline, "the PING was never answered"
        time.sleep(0.01)


def test_a_ping_left_unanswered_breaks_the_subscription(feed, monkeypatch):
    assert feed.current()
    monkeypatch.setattr(feed, "_ping_sent_at", time.monotonic() - 2)  # and no answer coming
    with pytest.raises(FeedBroken):
        feed.current()
    assert not feed.subscribed


def test_a_subscription_that_redis_drops_is_broken(feed, redis_server):
    assert feed.current()
    with redis_server.client() as client:
        client.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
    deadline = time.monotonic() + 5
    with pytest.raises(FeedBroken):  # noqa: PT012 (the drop reaches the socket in a moment)
        while True:
            assert time.monotonic() < deadline, "the dropped subscription went unnoticed"
            feed.current()
            time.sleep(0.01)
    assert not feed.subscribed
