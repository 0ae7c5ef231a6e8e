"""Is this session live, and whose is it? Asked on every bearer-authenticated call: one query on
the driver, or with Redis a short cache kept current by what every instance publishes (a
subscription, infra/session_feed.py; one Redis read per call while it cannot be trusted), so that
a logout on one instance is refused on every other at once, and a failing Redis neither stalls
calls nor loses revocations.
Why: docs/architecture/design-notes.md, "Live sessions and revocation"."""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from flask import g
from redis import Redis, RedisError

from app.db.driver_query import DriverQuery
from app.extensions import db
from app.infra.live_sql import LIVE_ACCOUNT
from app.infra.session_feed import ACCOUNT, CHANNEL, REVOKED, SITES, FeedBroken, SessionFeed

log = logging.getLogger("svc_auth.sessions")

REDIS_REST_SECONDS = 5
REDIS_TIMEOUT = 0.5  # seconds: a hung Redis costs this once per rest (session_feed.LEASE_SECONDS)
REPUBLISH_SECONDS = 0.5
UNPUBLISHED_LIMIT = 10_000  # per process; beyond it the oldest are left to the database
EPOCH_KEY = "svc-auth:epoch"  # set once per Redis lifetime: gone or changed, caches are stale
PUBLISHED_IDS = 500  # ids per message on the channel


@dataclass(frozen=True)
class Account:
    """What a bearer call learns about the person behind the token."""

    id: str
    email: str
    full_name: str
    plan: str
    email_verified: bool
    providers: tuple[str, ...]


class RevocationUnpublished(RedisError):
    """Revocations committed to the database that Redis has not taken: another instance may
    still answer from its copy, so no surface answers success for them (a RedisError: every
    surface's 503, and the CLI's error). They are published as soon as Redis answers; a retry
    of the logout then finds the session ended."""

    def __init__(self, count: int) -> None:
        super().__init__(f"{count} revocations are recorded but not yet shared with every"
                         " instance (Redis does not answer this one); retry shortly")


class _RedisSays(StrEnum):
    """What Redis knows of a session: revoked, not revoked, or nothing (no Redis, or resting)."""

    REVOKED = "revoked"
    NOT_REVOKED = "not_revoked"
    NOTHING = "nothing"


@dataclass(frozen=True)
class _Cached:
    account: Account
    session_expires_at: datetime
    fetched_at: float
    generation: int  # the lookup's generation when fetched: a later failure voids it
    mark: bytes | str | None  # the account's change mark in Redis when fetched


class LiveSessions:
    def __init__(self, redis_url: str | None, *, revoked_ttl: int, cache_seconds: float,
                 cache_size: int = 10_000) -> None:
        self.redis = (Redis.from_url(redis_url, socket_timeout=REDIS_TIMEOUT,
                                     socket_connect_timeout=REDIS_TIMEOUT)
                      if redis_url else None)
        self.revoked_ttl, self.cache_seconds = revoked_ttl, cache_seconds
        self.cache_size = cache_size
        self._cache: OrderedDict[str, _Cached] = OrderedDict()
        self._generation = 0  # one more after every Redis failure or epoch change
        # Bytes (the client does not decode); redis-py types its answers as either.
        self._epoch: bytes | str | None = None
        self._redis_resting_until = 0.0  # after a failure, leave Redis alone for a moment
        # Revocations not yet in Redis: session id -> when its marker would expire (epoch s).
        self._unpublished: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()  # guards _unpublished and _republisher
        self._republisher: threading.Thread | None = None
        self._lookup: DriverQuery | None = None
        # What every instance publishes, read by this worker: while it is current, no Redis read.
        self._feed = (SessionFeed(redis_url, self._on_feed, timeout=REDIS_TIMEOUT)
                      if redis_url else None)
        self._feed_seen = 0  # messages read so far: one read during a lookup voids its caching
        self._feed_lock = threading.Lock()  # one thread reads the subscription at a time
        self._sites_seen = 0  # "the sites changed" messages read (feed_version)

    def live_account(self, session_id: str, user_id: str, at: datetime) -> Account | None:
        if self._feed_current():
            cached = self._cache.get(session_id)
            if (cached is not None and cached.account.id == user_id
                    and cached.generation == self._generation
                    and time.monotonic() - cached.fetched_at < self.cache_seconds
                    and cached.session_expires_at > at):
                return cached.account
            return self._query(session_id, user_id, at, cache=True)
        said, mark = self._redis_says(session_id, user_id)
        if said is _RedisSays.REVOKED:
            self._cache.pop(session_id, None)
            return None
        if said is _RedisSays.NOT_REVOKED:  # a recent cached answer is good enough
            cached = self._cache.get(session_id)
            if (cached is not None and cached.account.id == user_id
                    and cached.generation == self._generation and cached.mark == mark
                    and time.monotonic() - cached.fetched_at < self.cache_seconds
                    and cached.session_expires_at > at):
                return cached.account
        return self._query(session_id, user_id, at, cache=said is _RedisSays.NOT_REVOKED,
                           mark=mark)

    def _feed_current(self) -> bool:
        """Whether this worker's copy of what was published may be trusted now (the feed read
        first): never while Redis is resting or revocations of ours wait to be published."""
        if self._feed is None or self._unpublished or self._resting():
            return False
        if not self._feed_lock.acquire(blocking=False):
            return False  # another thread is reading it: this call asks Redis
        try:
            return self._feed.current()
        except FeedBroken:
            self._failed("checking sessions in the database")
            return False
        finally:
            self._feed_lock.release()

    def _subscribe(self, feed: SessionFeed) -> None:
        if self._feed_lock.acquire(blocking=False):
            try:
                feed.subscribe()
                self._generation += 1  # what was published before it was missed
            finally:
                self._feed_lock.release()

    def _on_feed(self, kind: str, ids: list[str]) -> None:
        self._feed_seen += 1
        if kind == REVOKED:
            for session_id in ids:
                self._cache.pop(session_id, None)
        elif kind == ACCOUNT:
            self._drop_accounts(set(ids))
        elif kind == SITES:
            self._sites_seen += 1

    def feed_version(self) -> tuple[int, int] | None:
        """While this worker's copy of what was published may be trusted, what it has read of
        the sites' changes: a copy of anything made from the sites at this version is current
        while it stays the same. None while it may not be (no Redis, or Redis failing)."""
        if self._feed is not None and not self._feed.subscribed and not self._resting():
            try:
                self._subscribe(self._feed)
            except (RedisError, OSError):
                self._failed("site changes read from the database")
        if not self._feed_current():
            return None
        return self._generation, self._sites_seen

    def sites_mark_read(self) -> str | None:
        """The sites' mark (domain/clients/origins.py) as this request's session lookup read it
        from the database, in its statement ("" if there is none yet); None if no lookup of this
        request went to the database (none, or answered from the cache)."""
        mark: str | None = g.get("svc_sites_mark")
        return mark

    def publish_sites_changed(self) -> None:
        """The registered sites changed (committed): every worker reads them again."""
        self._sites_seen += 1
        if self.redis is None or self._resting():
            return
        try:
            self.redis.publish(CHANNEL, SITES)
            self.redis.ping()  # see _publish_unpublished
        except RedisError:
            self._failed("site changes left to the database's mark")

    def _drop_accounts(self, user_ids: set[str]) -> None:
        for session_id in [s for s, c in self._cache.items() if c.account.id in user_ids]:
            self._cache.pop(session_id, None)

    def _query(self, session_id: str, user_id: str, at: datetime, *,
               cache: bool, mark: bytes | str | None = None) -> Account | None:
        # Straight on the driver (db/driver_query.py): no ORM unit of work, no pool checkout.
        if self._lookup is None or self._lookup.engine is not db.engine:
            self._lookup = DriverQuery(LIVE_ACCOUNT, db.engine)
        generation, seen = self._generation, self._feed_seen
        row = self._lookup.first(session_id=session_id, at=at)
        if row is not None:  # read in the same statement, for the CORS hook (sites_mark_read)
            g.svc_sites_mark = row[7]
        if row is None or row[0] != user_id:  # another account's session: none of this token's
            return None
        account = Account(row[0], row[1], row[2], row[3], bool(row[4]),
                          tuple(sorted(filter(None, (row[6] or "").split(",")))))
        # Only answers read while Redis answers are cached, and none read while a revocation or
        # a change came in (another thread's lookup may have read the row before it).
        if cache and seen == self._feed_seen:
            self._remember(session_id,
                           _Cached(account, row[5], time.monotonic(), generation, mark))
        return account

    def _remember(self, session_id: str, entry: _Cached) -> None:
        self._cache[session_id] = entry
        self._cache.move_to_end(session_id)
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _resting(self) -> bool:
        return time.monotonic() < self._redis_resting_until

    def _redis_says(self, session_id: str,
                    user_id: str) -> tuple[_RedisSays, bytes | str | None]:
        """Whether the session is revoked, and the account's change mark (see
        publish_account_changed), in one round trip."""
        if self.redis is None or self._resting():
            return _RedisSays.NOTHING, None
        try:
            self._publish_unpublished()  # our own first, or the answer below could be stale
            revoked, epoch, mark = self.redis.mget(_key(session_id), EPOCH_KEY,
                                                   _account_key(user_id))
            if epoch is None or epoch != self._epoch:
                self._new_epoch(epoch)
            if self._feed is not None and not self._feed.subscribed:
                self._subscribe(self._feed)
        except RedisError:
            self._failed("checking sessions in the database")
            return _RedisSays.NOTHING, None
        return (_RedisSays.NOT_REVOKED if revoked is None else _RedisSays.REVOKED), mark

    def publish_account_changed(self, user_ids: Iterable[str]) -> None:
        """An account's plan, name or address changed (committed): every instance reads it
        again on its next call instead of answering from its cache. If Redis does not answer,
        the others' caches hold the old answer SESSION_CACHE_SECONDS at most."""
        ids = set(user_ids)
        self._drop_accounts(ids)
        if self.redis is None or not ids or self._resting():
            return
        try:
            with self.redis.pipeline(transaction=False) as pipe:
                for user_id in ids:
                    pipe.set(_account_key(user_id), secrets.token_hex(8), ex=self.revoked_ttl)
                _publish(pipe, ACCOUNT, list(ids))
                pipe.execute()
            self.redis.ping()  # see _publish_unpublished
        except RedisError:
            self._failed("account changes left to the cache's expiry")

    def _new_epoch(self, seen: bytes | str | None) -> None:
        """Redis is new to this process, or lost its data since (restarted empty, and with it
        the revocations published before): nothing cached before may be trusted."""
        assert self.redis is not None
        if seen is None:
            self.redis.set(EPOCH_KEY, secrets.token_hex(8), nx=True)
            seen = self.redis.get(EPOCH_KEY)
        if self._epoch is not None:
            log.warning("redis lost its data: session cache dropped")
        self._generation += 1
        self._cache.clear()
        self._epoch = seen

    def _failed(self, consequence: str) -> None:
        """A hung Redis costs one timeout, then calls leave it alone for a while; the cache is
        stale from now on (another instance may have failed to publish a revocation)."""
        self._generation += 1
        if not self._resting():
            log.error("redis unavailable: %s for %ds", consequence, REDIS_REST_SECONDS)
        self._redis_resting_until = time.monotonic() + REDIS_REST_SECONDS

    def publish_revoked(self, session_ids: Iterable[str], *, confirm: bool = False) -> None:
        """Share revocations that just committed (the database holds them already); those
        Redis does not take are kept and published once it answers. With `confirm` (a logout),
        raises RevocationUnpublished then: the logout must not answer success meanwhile."""
        ids = list(session_ids)
        for session_id in ids:
            self._cache.pop(session_id, None)
        if self.redis is None or not ids:
            return
        self._keep(ids)
        published = False
        if not self._resting():  # resting: the republisher ends the rest once Redis answers
            try:
                self._publish_unpublished()
                published = True
            except RedisError:
                self._failed("revocations kept to publish later")
        if self._unpublished:
            self._start_republisher()
        if confirm and not published:
            raise RevocationUnpublished(len(ids))

    def _keep(self, session_ids: list[str]) -> None:
        expires = time.time() + self.revoked_ttl
        with self._lock:
            for session_id in session_ids:
                self._unpublished[session_id] = expires
                self._unpublished.move_to_end(session_id)
            dropped = 0
            while len(self._unpublished) > UNPUBLISHED_LIMIT:
                self._unpublished.popitem(last=False)
                dropped += 1
        if dropped:
            log.error("redis unavailable: %d revocations left to the database alone", dropped)

    def _publish_unpublished(self) -> None:
        """Write the kept revocations to Redis (each for what is left of its lifetime);
        RedisError if it does not answer."""
        if not self._unpublished:  # the usual case, read without the lock
            return
        assert self.redis is not None
        at = time.time()
        with self._lock:
            for session_id in [s for s, expires in self._unpublished.items() if expires <= at]:
                del self._unpublished[session_id]  # its tokens have expired: nothing to refuse
            pending = list(self._unpublished.items())
        if not pending:
            return
        with self.redis.pipeline(transaction=False) as pipe:
            for session_id, expires in pending:
                pipe.set(_key(session_id), 1, ex=max(1, math.ceil(expires - at)))
            _publish(pipe, REVOKED, [session_id for session_id, _ in pending])
            pipe.execute()
        # Redis writes a message to every subscriber before it reads its publisher's next
        # command: once this answers, every instance on this machine has it to read.
        self.redis.ping()
        with self._lock:
            for session_id, expires in pending:
                if self._unpublished.get(session_id) == expires:
                    del self._unpublished[session_id]

    def _start_republisher(self) -> None:
        # Started on demand, so never before a fork (gunicorn's preload): only requests call it.
        with self._lock:
            if self._republisher is not None:
                return
            self._republisher = threading.Thread(
                target=self._republish, name="svc-auth-revocations", daemon=True)
            self._republisher.start()

    def _republish(self) -> None:
        """Retry the kept revocations until Redis takes them, without holding up a request."""
        while True:
            time.sleep(REPUBLISH_SECONDS)
            with self._lock:
                if not self._unpublished:
                    self._republisher = None
                    return
                count = len(self._unpublished)
            try:
                self._publish_unpublished()
            except RedisError:
                self._failed("revocations kept to publish later")
                continue
            self._redis_resting_until = 0.0  # it answers: checks may ask it again
            log.warning("redis answers again: %d kept revocations published", count)


def _publish(pipe: Any, kind: str, ids: list[str]) -> None:
    for start in range(0, len(ids), PUBLISHED_IDS):
        pipe.publish(CHANNEL, " ".join([kind, *ids[start:start + PUBLISHED_IDS]]))


def _key(session_id: str) -> str:
    return f"svc-auth:revoked:{session_id}"


def _account_key(user_id: str) -> str:
    return f"svc-auth:account:{user_id}"
