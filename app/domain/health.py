"""Whether the service's dependencies answer, for /health and /health/ready: "ok", "unreachable",
or (Redis, which a single instance may do without) "not configured". The probes themselves are
app/infra/health.py's."""

from __future__ import annotations

from app.domain.services import services
from app.extensions import db
from app.infra import health


def database_state() -> str:
    return "ok" if health.database_answers(db.session) else "unreachable"


def redis_state() -> str:
    redis = services().redis
    if redis is None:
        return "not configured"
    return "ok" if health.redis_answers(redis) else "unreachable"
