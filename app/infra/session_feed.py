"""A worker's subscription to the revocations and account changes every instance publishes: with
it, "is this session live" is answered from the worker's own copy, with no Redis round trip, for
as long as Redis has proved the copy current within LEASE_SECONDS.
Why: docs/architecture/design-notes.md, "Live sessions and revocation".

Redis sends a subscriber the messages published before a PING ahead of that PING's answer, on
the same connection. So once the answer to a PING sent at time t has been read, every revocation
published before t has been read too; a revocation published since is at most as old as t. The
copy is trusted while t is less than LEASE_SECONDS ago: a revocation that Redis accepted is
acted on at once if it has arrived, and a worker cut off from Redis stops trusting its copy
within LEASE_SECONDS. The worker reads the connection itself, without blocking, at every check:
no thread.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from redis import ConnectionPool

CHANNEL = "svc-auth:sessions"
REVOKED, ACCOUNT = "r", "a"  # a message: the kind, a space, then ids separated by spaces
SITES = "s"  # the registered sites changed (no ids): app/domain/clients/origins.py
# Shorter than the Redis calls' timeout (0.5 s): an instance whose Redis hangs has stopped
# trusting its copy before another instance's logout can fail to publish and be answered.
LEASE_SECONDS = 0.25


class FeedBroken(Exception):
    """The subscription failed: messages may have been missed, the copy may not be trusted."""


class SessionFeed:
    """One subscription per worker process (made after the fork, on first use)."""

    def __init__(self, redis_url: str, on_message: Callable[[str, list[str]], None], *,
                 timeout: float) -> None:
        # RESP2 whatever the other clients speak: a subscribed connection then answers a PING
        # in the stream of messages, as ["pong", payload].
        self._pool = ConnectionPool.from_url(redis_url, protocol=2, socket_timeout=timeout,
                                             socket_connect_timeout=timeout)
        self._on_message = on_message
        self._timeout = timeout
        self._connection: Any = None  # redis.connection.AbstractConnection
        self._pid = 0
        self._proved_at = 0.0  # when the last answered PING was sent (time.monotonic)
        self._ping_sent_at = 0.0  # the PING awaiting its answer, or 0

    @property
    def subscribed(self) -> bool:
        return self._connection is not None and self._pid == os.getpid()

    def subscribe(self) -> None:
        """A new subscription (one round trip); raises a RedisError or OSError."""
        self.close()
        connection = self._pool.make_connection()
        try:
            connection.connect()
            connection.send_command("SUBSCRIBE", CHANNEL)
            connection.read_response()  # ["subscribe", CHANNEL, 1]: listening from here on
        except BaseException:
            connection.disconnect()
            raise
        self._connection, self._pid = connection, os.getpid()
        self._proved_at = time.monotonic()  # nothing was published to it before this moment
        self._ping_sent_at = 0.0

    def current(self) -> bool:
        """Read what has arrived (without waiting), renew the lease when it runs low, and say
        whether the copy may be trusted now. Raises FeedBroken."""
        if not self.subscribed:
            return False
        now = time.monotonic()
        try:
            while self._connection.can_read(timeout=0):
                self._handle(self._connection.read_response(), now)
            if self._ping_sent_at and now - self._ping_sent_at > 2 * self._timeout:
                # A Redis that hangs, or a connection that died without a word: a new one,
                # once Redis answers again (the lookup then leaves Redis alone for a while).
                raise FeedBroken("no answer to a PING")
            if not self._ping_sent_at and now - self._proved_at > LEASE_SECONDS / 2:
                self._connection.send_command("PING", repr(now))
                self._ping_sent_at = now
        except Exception as error:  # whatever the connection raised: it is no longer trusted
            self.close()
            raise FeedBroken(type(error).__name__) from error
        return now - self._proved_at < LEASE_SECONDS

    def _handle(self, message: Any, now: float) -> None:
        kind = _text(message[0])
        if kind == "message":
            what, *ids = _text(message[2]).split(" ")
            self._on_message(what, ids)
        elif kind == "pong":
            sent = float(_text(message[1]))
            if sent == self._ping_sent_at:
                self._proved_at, self._ping_sent_at = sent, 0.0
        else:
            raise FeedBroken(f"unexpected {kind!r} on the subscription")

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and self._pid == os.getpid():
            connection.disconnect()


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
