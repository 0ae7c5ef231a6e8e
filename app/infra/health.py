"""Probes of the service's dependencies: one round trip each, "ok" or "unreachable". What a
probe's answer means for /health and /health/ready is app/domain/health.py's."""

from __future__ import annotations

from typing import Any

from redis import Redis, RedisError
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, scoped_session


def database_answers(session: Session | scoped_session[Any]) -> bool:
    try:
        session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        return False
    return True


def redis_answers(redis: Redis) -> bool:
    try:
        redis.ping()
    except RedisError:
        return False
    return True
