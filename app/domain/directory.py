"""Is this session live, and whose is it? Asked on every bearer-authenticated call.

Without Redis the answer is one indexed query, run on the driver directly: the session joined to
its user, with the user's linked providers aggregated in the same statement. With Redis (several
instances), revocations are also written to a revoked-session set as each transaction commits,
so an instance can answer from a short per-process cache plus one cache hit, and a logout on one
instance is refused on every other at once. If Redis fails, the query answers and the failure is
logged.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from redis import Redis, RedisError
from sqlalchemy import bindparam, event, func, literal_column, select
from sqlalchemy.orm import Session

from app.domain.driver_query import DriverQuery
from app.extensions import db
from app.models import AuthSession, Identity, User

log = logging.getLogger("svc_auth.sessions")

_PENDING = "svc_revoked_sessions"
REDIS_REST_SECONDS = 5  # session.info key: ids revoked in the open transaction


@dataclass(frozen=True)
class Account:
    """What a bearer call learns about the person behind the token."""

    id: str
    email: str
    full_name: str
    plan: str
    email_verified: bool
    providers: tuple[str, ...]


@dataclass(frozen=True)
class _Cached:
    account: Account
    session_expires_at: datetime
    fetched_at: float


class SessionDirectory:
    def __init__(self, redis_url: str | None, *, revoked_ttl: int, cache_seconds: float,
                 cache_size: int = 10_000) -> None:
        self.redis = (Redis.from_url(redis_url, socket_timeout=0.5, socket_connect_timeout=0.5)
                      if redis_url else None)
        self.revoked_ttl, self.cache_seconds = revoked_ttl, cache_seconds
        self.cache_size = cache_size
        self._cache: OrderedDict[str, _Cached] = OrderedDict()
        self._redis_resting_until = 0.0  # after a failure, leave Redis alone for a moment
        self._lookup: DriverQuery | None = None

    def live_account(self, session_id: str, user_id: str, at: datetime) -> Account | None:
        revoked = self._known_revoked(session_id)
        if revoked:
            return None
        if revoked is False:  # Redis answered: a recent cached answer is good enough
            cached = self._cache.get(session_id)
            if (cached is not None and cached.account.id == user_id
                    and time.monotonic() - cached.fetched_at < self.cache_seconds
                    and cached.session_expires_at > at):
                return cached.account
        return self._query(session_id, user_id, at)

    def _query(self, session_id: str, user_id: str, at: datetime) -> Account | None:
        # Straight on the driver (domain/driver_query.py): no ORM unit of work, no pool checkout.
        if self._lookup is None or self._lookup.engine is not db.engine:
            self._lookup = DriverQuery(_LIVE_ACCOUNT, db.engine)
        row = self._lookup.first(session_id=session_id, user_id=user_id, at=at)
        if row is None:
            return None
        account = Account(row[0], row[1], row[2], row[3], bool(row[4]),
                          tuple(sorted(filter(None, (row[6] or "").split(",")))))
        if self.redis is not None:
            self._remember(session_id, _Cached(account, row[5], time.monotonic()))
        return account

    def _remember(self, session_id: str, entry: _Cached) -> None:
        self._cache[session_id] = entry
        self._cache.move_to_end(session_id)
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)

    def _known_revoked(self, session_id: str) -> bool | None:
        """True or False from Redis; None without Redis, or when it does not answer."""
        if self.redis is None or time.monotonic() < self._redis_resting_until:
            return None
        try:
            return bool(self.redis.exists(_key(session_id)))
        except RedisError:
            # A hung Redis costs one timeout, then calls go straight to the database for a while.
            self._redis_resting_until = time.monotonic() + REDIS_REST_SECONDS
            log.error("redis unavailable: checking sessions in the database for %ds",
                      REDIS_REST_SECONDS)
            return None

    def publish_revoked(self, session_ids: Iterable[str]) -> None:
        ids = list(session_ids)
        for session_id in ids:
            self._cache.pop(session_id, None)
        if self.redis is None or not ids:
            return
        try:
            with self.redis.pipeline(transaction=False) as pipe:
                for session_id in ids:
                    pipe.set(_key(session_id), 1, ex=self.revoked_ttl)
                pipe.execute()
        except RedisError:
            # The database holds the revocation; instances answering from their cache may
            # accept the session for up to `cache_seconds` more.
            log.error("redis unavailable: %d revocations not shared", len(ids))


_LIVE_ACCOUNT = (
    select(User.id, User.email, User.full_name, User.plan, User.email_verified,
           AuthSession.expires_at,
           # A literal separator: a bound one would be rendered per execution.
           select(func.aggregate_strings(Identity.provider, literal_column("','")))
           .where(Identity.user_id == User.id).scalar_subquery())
    .join(User, User.id == AuthSession.user_id)
    .where(AuthSession.id == bindparam("session_id"),
           AuthSession.user_id == bindparam("user_id"),
           AuthSession.revoked_at.is_(None),
           AuthSession.expires_at > bindparam("at", type_=AuthSession.expires_at.type),
           User.disabled_at.is_(None))
)


def _key(session_id: str) -> str:
    return f"svc-auth:revoked:{session_id}"


def note_revoked(session_ids: Iterable[str]) -> None:
    """Remember revocations of the open transaction, to publish when (and if) it commits."""
    db.session.info.setdefault(_PENDING, set()).update(session_ids)


@event.listens_for(Session, "after_commit")
def _publish_after_commit(session: Session) -> None:
    revoked = session.info.pop(_PENDING, None)
    if revoked:
        from app.domain.services import services

        services().directory.publish_revoked(revoked)


@event.listens_for(Session, "after_rollback")
def _forget_after_rollback(session: Session) -> None:
    session.info.pop(_PENDING, None)
