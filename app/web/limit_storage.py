"""Where flask-limiter counts: the database without Redis; with Redis, Redis, and the database while
Redis fails, so that a limit holds for the whole deployment (schemes `svc-db`, `svc-redis+db`).
Why: docs/architecture/design-notes.md, "Rate limits and their storage"."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from limits import parse
from limits.storage import RedisStorage, Storage
from redis import RedisError
from sqlalchemy import Integer, String, bindparam, case, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from app.domain.tokens import tokens
from app.extensions import db
from app.infra.settings import settings
from app.models import RateLimitCounter
from app.models.types import UTCDateTime

log = logging.getLogger("svc_auth.ratelimits")

REDIS_REST_SECONDS = 5
SCHEME_SUFFIX = "+db"
DATABASE_URI = "svc-db://"
COUNTING_SINCE = "svc-auth:counting-since"  # when this Redis first counted, empty

# What reading a limit's storage may raise (app/web/ratelimits.py's 429 falls back on these).
STORAGE_ERRORS: tuple[type[Exception], ...] = (RedisError, SQLAlchemyError, OSError)

# Redis's count, and since when this Redis has counted: set by its first count after it started
# (or was emptied), in the same step, so that no count comes before it.
INCR_SINCE = """
local current = redis.call("incrby", KEYS[1], ARGV[2])
if tonumber(current) == tonumber(ARGV[2]) then
    redis.call("expire", KEYS[1], ARGV[1])
end
local since = redis.call("get", KEYS[2])
if not since then
    since = ARGV[3]
    redis.call("set", KEYS[2], since)
end
return {current, since}
"""


def storage_uri(redis_url: str | None) -> str:
    """The RATELIMIT_STORAGE_URI that counts in the database (no Redis), or in Redis and in the
    database while it fails."""
    if not redis_url:
        return DATABASE_URI
    scheme, rest = redis_url.split("://", 1)
    return f"svc-{scheme}{SCHEME_SUFFIX}://{rest}"


class DatabaseStorage(Storage):
    """The limits counted in the app's database, in fixed windows (flask-limiter's strategy)."""

    STORAGE_SCHEME = ["svc-db"]

    def __init__(self, uri: str = DATABASE_URI, wrap_exceptions: bool = False,
                 **_options: Any) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions)

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return SQLAlchemyError

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        return _database_incr(key, expiry, amount)

    def get(self, key: str) -> int:
        row = _live_row(key)
        return row.hits if row is not None else 0

    def get_expiry(self, key: str) -> float:
        row = _live_row(key)
        return row.expires_at.timestamp() if row is not None else time.time()

    def check(self) -> bool:
        with db.engine.connect() as connection:
            connection.execute(select(1))
        return True

    def reset(self) -> int | None:
        with db.engine.begin() as connection:
            return int(connection.execute(delete(RateLimitCounter)).rowcount or 0)

    def clear(self, key: str) -> None:
        with db.engine.begin() as connection:
            connection.execute(delete(RateLimitCounter).where(
                RateLimitCounter.key == _hashed(key)))

# Redis's count and since when it has counted, in one round trip (false: no such key).
GET_SINCE = """
return {redis.call("get", KEYS[1]), redis.call("get", KEYS[2])}
"""


class RedisOrDatabaseStorage(Storage):
    STORAGE_SCHEME = ["svc-redis+db", "svc-rediss+db"]

    def __init__(self, uri: str, wrap_exceptions: bool = False, **options: Any) -> None:
        scheme, rest = uri.split("://", 1)
        self.redis = RedisStorage(f"{scheme.removeprefix('svc-').removesuffix(SCHEME_SUFFIX)}"
                                  f"://{rest}", wrap_exceptions=wrap_exceptions, **options)
        self.database = DatabaseStorage()
        self._incr_since = self.redis.get_connection().register_script(INCR_SINCE.encode())
        self._get_since = self.redis.get_connection().register_script(GET_SINCE.encode())
        self._resting_until = 0.0
        super().__init__(uri, wrap_exceptions=wrap_exceptions)

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return STORAGE_ERRORS

    def _redis_answers(self) -> bool:
        return time.monotonic() >= self._resting_until

    def _failed(self, error: Exception) -> None:
        log.error("redis unavailable: rate limits counted in the database for %ds (%s)",
                  REDIS_REST_SECONDS, type(error).__name__)
        self._resting_until = time.monotonic() + REDIS_REST_SECONDS

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        if self._redis_answers():
            at = time.time()
            try:
                current, since = self._incr_since(
                    [self.redis.prefixed_key(key), self.redis.prefixed_key(COUNTING_SINCE)],
                    [expiry, amount, repr(at)])
            except RedisError as error:
                self._failed(error)
            else:
                # What the database counted while this Redis was away may still be in the
                # window (and a worker goes on counting there for up to its rest after Redis
                # is back).
                if at - float(since) < expiry + REDIS_REST_SECONDS:
                    return int(current) + self.database.get(key)
                return int(current)
        return self.database.incr(key, expiry, amount)

    def get(self, key: str) -> int:
        """What `incr` would return before counting (a limit that counts only some requests
        checks with this first: app/web/ratelimits.py, the sign-up's)."""
        if self._redis_answers():
            try:
                current, since = self._get_since(
                    [self.redis.prefixed_key(key), self.redis.prefixed_key(COUNTING_SINCE)])
            except RedisError as error:
                self._failed(error)
            else:
                if since is None or time.time() - float(since) < _window(key) + REDIS_REST_SECONDS:
                    return int(current or 0) + self.database.get(key)
                return int(current or 0)
        return self.database.get(key)

    def get_expiry(self, key: str) -> float:
        failure: RedisError | None = None
        if self._redis_answers():
            try:
                return self.redis.get_expiry(key)
            except RedisError as error:
                self._failed(error)
                failure = error
        row = _live_row(key)
        if row is None:
            # Counted in Redis, which cannot say when its window ends: the caller falls back
            # to the limit's whole period (app/web/ratelimits.py), not "now".
            raise failure or RedisError("the window of this limit is not known")
        expires_at: datetime = row.expires_at
        return expires_at.timestamp()

    def check(self) -> bool:
        return self.redis.check()

    def reset(self) -> int | None:
        return self.redis.reset()

    def clear(self, key: str) -> None:
        self.redis.clear(key)
        self.database.clear(key)


@lru_cache(maxsize=64)
def _window(key: str) -> int:
    """The seconds of the window a limit's key counts (limits ends it with ".../n/granularity")."""
    multiples, granularity = key.rsplit("/", 2)[-2:]
    return int(parse(f"1 per {multiples} {granularity}").get_expiry())


def _hashed(key: str) -> str:
    return tokens.keyed_digest(settings().secret_key, "rate-limit", key).hex()


def _now() -> datetime:
    return datetime.fromtimestamp(time.time(), UTC)


def _database_incr(key: str, expiry: int, amount: int) -> int:
    """One atomic upsert (INSERT ... ON CONFLICT DO UPDATE ... RETURNING), in a transaction of
    its own: concurrent hits from every worker and instance are all counted."""
    at = _now()
    with db.engine.begin() as connection:
        return int(connection.execute(_upsert(connection.dialect.name), {
            "key": _hashed(key), "amount": amount, "at": at,
            "ends": at + timedelta(seconds=expiry)}).scalar_one())


@lru_cache(maxsize=2)
def _upsert(dialect: str) -> Any:
    """Built once per dialect: building it cost more than running it."""
    table = RateLimitCounter.__table__
    insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
    key, amount = bindparam("key", type_=String()), bindparam("amount", type_=Integer())
    ends = bindparam("ends", type_=UTCDateTime())
    expired = RateLimitCounter.expires_at <= bindparam("at", type_=UTCDateTime())
    return insert(table).values(key=key, hits=amount, expires_at=ends).on_conflict_do_update(
        index_elements=[table.c.key],
        set_={"hits": case((expired, amount), else_=RateLimitCounter.hits + amount),
              "expires_at": case((expired, ends), else_=RateLimitCounter.expires_at)},
    ).returning(table.c.hits)


_LIVE = select(RateLimitCounter.hits, RateLimitCounter.expires_at).where(
    RateLimitCounter.key == bindparam("key"),
    RateLimitCounter.expires_at > bindparam("at", type_=UTCDateTime()))


def _live_row(key: str) -> Any:
    with db.engine.connect() as connection:
        return connection.execute(_LIVE, {"key": _hashed(key), "at": _now()}).first()
