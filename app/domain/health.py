"""Whether the service's dependencies answer, for /health and /health/ready: "ok", "unreachable",
or (Redis, which a single instance may do without) "not configured"."""

from __future__ import annotations

from redis import RedisError
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.domain.tools import tools
from app.extensions import db


def database_state() -> str:
    try:
        db.session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        return "unreachable"
    return "ok"


def redis_state() -> str:
    redis = tools().live_sessions.redis
    if redis is None:
        return "not configured"
    try:
        redis.ping()
    except RedisError:
        return "unreachable"
    return "ok"
